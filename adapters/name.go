package adapters

import (
	"net/url"
	"strings"
)

// maxDecodeRounds bounds how often an address segment is percent-decoded: the
// Sites serve some segments encoded two or three times over
// (Iron%25252DBlooded), never more.
const maxDecodeRounds = 4

// unescapeFully percent-decodes a path segment until it stops changing, at
// most maxDecodeRounds times; an undecodable round keeps what it had.
func unescapeFully(seg string) string {
	for range maxDecodeRounds {
		d, err := url.PathUnescape(seg)
		if err != nil || d == seg {
			break
		}
		seg = d
	}
	return seg
}

// NameFromAddress makes a readable name from a Series address, for a Series
// whose page gave no title: the address's last path segment, without ".html"
// and without a leading short id the Site puts before the slug (comix's
// /title/<hid>-<slug>), its dashes to spaces, then percent-decoded until it
// stops changing. The dashes the address shows separate words; an encoded one
// was a hyphen of the title, so it is decoded after and stays:
// "Revenge-of-the-Iron%25252DBlooded-Sword-Hound" reads "Revenge of the
// Iron-Blooded Sword Hound". It is "" when the address holds nothing readable
// (an id that is only a UUID, or no path).
func NameFromAddress(address string) string {
	address = strings.TrimSpace(address)
	path := address
	if u, err := url.Parse(address); err == nil {
		path = u.EscapedPath()
	} else if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	name := strings.TrimSuffix(path[strings.LastIndex(strings.TrimRight(path, "/"), "/")+1:], "/")
	name = strings.TrimSuffix(name, ".html")
	if ref, err := Recognise(address); err == nil {
		if rest, ok := strings.CutPrefix(name, ref.SeriesID+"-"); ok && rest != "" {
			name = rest
		}
	}
	if name == "" || kaganeUUID.MatchString(strings.ToLower(name)) {
		return ""
	}
	name = unescapeFully(strings.ReplaceAll(name, "-", " "))
	return cleanText(name, maxTitleLen)
}

// DisplayName is how a Series is shown where a title belongs (the admin list
// and detail page): its parsed title, else a name made from its address, else
// its series_id.
func DisplayName(title, address, seriesID string) string {
	if t := strings.TrimSpace(title); t != "" {
		return t
	}
	if n := NameFromAddress(address); n != "" {
		return n
	}
	return seriesID
}
