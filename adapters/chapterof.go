package adapters

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/mangabookmark/mangabookmark/word"
)

// chapterReader is implemented by adapters whose chapter page addresses carry
// the chapter's number. Kagane's reader pages carry a book id instead, so the
// userscript reads Kagane's number from the page, never from the address.
type chapterReader interface {
	chapterOf(u *url.URL) (string, bool)
}

// ChapterOf reads the chapter number a chapter page address names ("12.5"),
// false for a Series page, an address of no Site, or a chapter page whose
// address holds no number. The userscript applies the same rules, kept in
// step by adapters/testdata/recognition/cases.json (CONTEXT.md, Recognition).
func ChapterOf(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", false
	}
	ref, err := Recognise(raw)
	if err != nil {
		return "", false
	}
	c, ok := registry[word.Site(ref.Site)].(chapterReader)
	if !ok {
		return "", false
	}
	return c.chapterOf(u)
}

// Hosts lists every host a Site's pages were served from: its current hosts,
// then the legacy ones it is still recognised on (the userscript @match list).
func Hosts(site string) []string {
	a, ok := registry[word.Site(site)]
	if !ok {
		return nil
	}
	out := append([]string(nil), a.Domains()...)
	if l, ok := a.(legacyHoster); ok {
		out = append(out, l.legacyDomains()...)
	}
	return out
}

// /comics/<slug>/chapter/<n> and /series/<slug>-<hex>/chapter/<n>.
func (asurascans) chapterOf(u *url.URL) (string, bool) {
	seg := pathSegments(u)
	if len(seg) >= 4 && seg[2] == "chapter" {
		return chapterNumber(seg[3])
	}
	return "", false
}

// /title/<Title>/chapter/<n>/<page>.
func (demonicscans) chapterOf(u *url.URL) (string, bool) {
	seg := pathSegments(u)
	if len(seg) >= 4 && seg[0] == "title" && seg[2] == "chapter" {
		return chapterNumber(seg[3])
	}
	return "", false
}

// /title/<hid>-<slug>/<id>-chapter-<n>.
func (comix) chapterOf(u *url.URL) (string, bool) {
	if m := comixChapterPath.FindStringSubmatch(u.EscapedPath()); m != nil {
		return chapterNumber(m[2])
	}
	return "", false
}

// /<slug>/chapter-<n>-<title>.html.
func (novelfull) chapterOf(u *url.URL) (string, bool) {
	if m := novelfullChapterPath.FindStringSubmatch(u.EscapedPath()); m != nil {
		return chapterNumber(m[2])
	}
	return "", false
}

// lnwLegacyChapter is the old template's chapter segment: chapter-<n> (.co) or
// <id>-chapter-<n> (.com).
var lnwLegacyChapter = regexp.MustCompile(`^(?:\d+-)?chapter-(\d+(?:\.\d+)?)(?:-|$)`)

// /novel/<slug>/chapter/<n>/ now; /novel/<slug>/[<id>-]chapter-<n> on the old hosts.
func (lightnovelworld) chapterOf(u *url.URL) (string, bool) {
	seg := pathSegments(u)
	switch {
	case len(seg) >= 4 && seg[2] == "chapter":
		return chapterNumber(seg[3])
	case len(seg) == 3:
		if m := lnwLegacyChapter.FindStringSubmatch(strings.ToLower(seg[2])); m != nil {
			return chapterNumber(m[1])
		}
	}
	return "", false
}
