package adapters

import (
	"net/url"
	"strings"
)

// Pasted is an address as a person pastes it, with "https://" put in front
// when it names no scheme at all: people copy "asurascans.com/comics/…" from
// an address bar that hides the scheme (issue 23). An address that names any
// scheme is kept as it is, so Recognise still refuses http:// and the rest,
// and a Series added this way is fetched through the gate like any other.
func Pasted(raw string) string {
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return raw
	case strings.HasPrefix(raw, "//"): // scheme-relative: the host is named
		return "https:" + raw
	}
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" {
		return raw
	}
	return "https://" + raw
}
