package adapters

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
)

// Caps on what page text may put into Facts.
const (
	maxTitleLen = 300
	maxURLLen   = 2048
)

var spaceRun = regexp.MustCompile(`\s+`)

// cleanText trims text the HTML parser already unescaped, folds whitespace runs to
// one space and caps its length (on a rune boundary).
func cleanText(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(dropControl, s)
	s = strings.TrimSpace(spaceRun.ReplaceAllString(s, " "))
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut])
}

// dropControl removes control characters (whitespace becomes a space, folded
// later) and the bidirectional overrides that could reorder a displayed title.
func dropControl(r rune) rune {
	switch {
	case r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v':
		return ' '
	case unicode.IsControl(r):
		return -1
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return -1
	}
	return r
}

// charRef is one well-formed character reference: a named, decimal or hex
// reference closed by its semicolon. A bare "&" (or "&amp" with no semicolon)
// is literal text, not a reference.
var charRef = regexp.MustCompile(`&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});`)

// decodeLeftover decodes, once more, the character references still in text
// after its source's own decoding. Sites serve some titles escaped twice
// (Reader&amp;#39;s in the HTML), and a reader must see Reader's, never the
// &#39;. Only well-formed references are touched, so "Tom & Jerry" and "AT&T"
// stay as they are; an unknown name stays too.
func decodeLeftover(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	return charRef.ReplaceAllStringFunc(s, func(ref string) string {
		d := html.UnescapeString(ref)
		// A name that is not an entity but starts with one ("&notareference;"
		// starts with the legacy "&not") decodes only in part: keep it whole.
		if d != ";" && strings.HasSuffix(d, ";") {
			return ref
		}
		return d
	})
}

// cleanTitle is a title read from HTML text or an attribute (the parser decoded
// it once): leftover references decoded, then cleaned and capped.
func cleanTitle(s string) string {
	return cleanText(decodeLeftover(s), maxTitleLen)
}

// cleanRawTitle is a title from JSON in a page or an API body: HTML-unescaped
// once as raw text, then leftover references decoded, cleaned and capped.
func cleanRawTitle(s string) string {
	return cleanTitle(html.UnescapeString(s))
}

// cleanURL resolves ref against base and keeps it only if it is an absolute http(s)
// address without user-info, of bounded length. Anything else (javascript:, data:,
// garbage) is dropped: nothing from a page is trusted.
func cleanURL(base *url.URL, ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" || len(ref) > maxURLLen {
		return ""
	}
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return ""
	}
	s := u.String()
	if len(s) > maxURLLen {
		return ""
	}
	return s
}

// matchLink resolves a link of the page against its address (cleanURL: only an
// absolute http(s) address survives) and matches pattern against its whole
// escaped path. The address keeps the link's own host, so the off-site rule in
// latest.offer judges the host the link really names (doc.go, "Where an
// adapter may look"). m is nil when the link is dropped or its path does not
// match.
func matchLink(base *url.URL, href string, pattern *regexp.Regexp) (abs string, u *url.URL, m []string) {
	abs = cleanURL(base, href)
	if abs == "" {
		return "", nil, nil
	}
	u, err := url.Parse(abs)
	if err != nil {
		return "", nil, nil
	}
	if m = pattern.FindStringSubmatch(u.EscapedPath()); m == nil {
		return "", nil, nil
	}
	return abs, u, m
}

// offSite reports whether u (from cleanURL) is on a host that is not a's, so
// a link out of the page (a comment, an ad, a lookalike) is never taken for
// one of its chapters.
func offSite(a Adapter, u string) bool {
	if u == "" {
		return false
	}
	p, err := url.Parse(u)
	return err != nil || !hostKnown(a, p.Hostname())
}

// matchers holds each selector compiled once. The adapters run the same few
// selectors on every page, some once per chapter row, and goquery's string
// methods (Find, Is, ChildrenFiltered) compile theirs on every call.
var matchers sync.Map // selector → goquery.Matcher

// sel is the selector compiled, as goquery's string methods compile it. The
// adapters' selectors are constants: one that does not compile is a bug the
// parse tests meet at once.
func sel(selector string) goquery.Matcher {
	if m, ok := matchers.Load(selector); ok {
		return m.(goquery.Matcher)
	}
	m := cascadia.MustCompile(selector)
	matchers.Store(selector, m)
	return m
}
