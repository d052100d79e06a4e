package adapters

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/mangabookmark/mangabookmark/word"
)

// Facts is what one read learned. LatestChapter is a canonical decimal string
// ("12.5", "110"; no trailing zeros, no leading +), "" when !HasLatest. Title
// reads as a person reads it: decoded by its source (HTML text, attribute, JSON
// in a page, API body), any character reference left after that decoded once
// more, trimmed and length-capped. URLs are absolute http(s) addresses or "".
type Facts struct {
	Title, CoverURL  string
	Kind             word.Kind // the Site's Kind (word.Site.Kind)
	LatestChapter    string
	LatestChapterURL string
	HasLatest        bool
	// Completed is the Site's own completed value (CONTEXT.md, Rules: Completion
	// hint value). A missing marker is false, never an error.
	Completed bool
}

// Ref identifies a recognised Series: its Site, its stable series_id and its
// canonical Series address (https, the Site's real host).
type Ref struct{ Site, SeriesID, URL string }

// Target is what to fetch for one Series. API is true when the body is JSON from an
// API endpoint rather than an HTML page.
type Target struct {
	URL string
	API bool
	// Body, when not "", is sent as a POST with Content-Type application/json
	// (Kagane's listing search, kaganeListingBody); "" is a GET. A string, not
	// bytes, so a Target stays a comparable value.
	Body string
}

// Adapter knows one Site.
type Adapter interface {
	Site() string      // "asurascans", ...
	Domains() []string // hosts that belong to the Site (exact host or subdomain match)
	// Recognise maps a Series page or a chapter page of it (current and legacy
	// shapes) to the Series. Anything else is not ours.
	Recognise(u *url.URL) (Ref, bool)
	// Target says what to fetch for the Series.
	Target(ref Ref) Target
	// Parse reads the fetched body. It never fetches. It returns an error only when
	// the body is not the Site's Series page at all (its anchor is missing).
	Parse(body []byte, ref Ref) (Facts, error)
}

// ReadySelector is implemented by adapters whose page fills in after load (the
// chapter list of a browser Site): the browser route waits, within its bound, for
// this CSS selector before it takes the rendered HTML.
type ReadySelector interface {
	ReadySelector() string
}

var registry = map[word.Site]Adapter{
	word.Asurascans:      asurascans{},
	word.Demonicscans:    demonicscans{},
	word.Comix:           comix{},
	word.Kagane:          kagane{},
	word.Novelfull:       novelfull{},
	word.Lightnovelworld: lightnovelworld{},
}

// ByName returns the adapter of a Site.
func ByName(site string) (Adapter, bool) {
	a, ok := registry[word.Site(site)]
	return a, ok
}

// ErrNotSeries is wrapped by Parse when the body is not the Site's Series page.
var ErrNotSeries = errors.New("not a series page")

// ErrUnknownSite is wrapped by Recognise when the address's host is no
// Site's: the one refusal where naming the Sites helps.
var ErrUnknownSite = errors.New("unknown site")

// Recognise maps any address to its Site and Series. The error says plainly why an
// address is not accepted: it is the reason `mangabookmark fetch`, the add
// box, the import and the API all give.
func Recognise(raw string) (Ref, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return Ref{}, errors.New("the address is empty")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Scheme == "" {
		return Ref{}, errors.New("not a URL (expected https://host/path)")
	}
	if u.Scheme != "https" {
		return Ref{}, fmt.Errorf("not https (the address uses %q)", u.Scheme)
	}
	if u.User != nil {
		return Ref{}, errors.New("the address carries a user name or password")
	}
	host := strings.ToLower(u.Hostname())
	for _, site := range word.Sites {
		a := registry[site]
		if !hostKnown(a, host) {
			continue
		}
		ref, ok := a.Recognise(u)
		if !ok {
			return Ref{}, fmt.Errorf("%s address, but not a Series or chapter page", site)
		}
		return ref, nil
	}
	return Ref{}, fmt.Errorf("%w %q", ErrUnknownSite, host)
}

// legacyHoster is implemented by adapters that recognise addresses on hosts the Site
// no longer serves from (they are recognised, never fetched).
type legacyHoster interface {
	legacyDomains() []string
}

func hostKnown(a Adapter, host string) bool {
	if HostIn(host, a.Domains()) {
		return true
	}
	if l, ok := a.(legacyHoster); ok {
		return HostIn(host, l.legacyDomains())
	}
	return false
}

// coverHoster is implemented by adapters whose Site serves cover images from
// hosts that are not its own (an image CDN under another name).
type coverHoster interface {
	coverDomains() []string
}

// CoverHosts lists the hosts, not the Site's own, that the Site serves its
// cover images from; none for most Sites. The fetch gate admits a cover on
// these as well as on Domains.
func CoverHosts(a Adapter) []string {
	if c, ok := a.(coverHoster); ok {
		return c.coverDomains()
	}
	return nil
}

// HostIn reports whether host is one of domains or a subdomain of one.
func HostIn(host string, domains []string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, d := range domains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// recogniseCommon applies the checks every adapter shares: https, no user-info, a
// host of the Site (current or legacy).
func recogniseCommon(a Adapter, u *url.URL) bool {
	return u != nil && u.Scheme == "https" && u.User == nil && u.Host != "" && hostKnown(a, u.Hostname())
}

// pathSegments splits the escaped path into its non-empty segments.
func pathSegments(u *url.URL) []string {
	var out []string
	for s := range strings.SplitSeq(u.EscapedPath(), "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// baseURL is the address relative links of a page are resolved against: the
// Series address, or the Site's home when the caller has none (the parse tool).
func baseURL(a Adapter, ref Ref) *url.URL {
	if ref.URL != "" {
		if u, err := url.Parse(ref.URL); err == nil && u.IsAbs() {
			return u
		}
	}
	return &url.URL{Scheme: "https", Host: a.Domains()[0], Path: "/"}
}
