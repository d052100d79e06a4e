package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// wantsFragment: htmx asked for a region. A boosted request and a history
// restore carry HX-Request too but want the whole page.
func wantsFragment(r *http.Request) bool {
	return r.Header.Get("HX-Request") == "true" &&
		r.Header.Get("HX-Boosted") == "" &&
		r.Header.Get("HX-History-Restore-Request") == ""
}

// since is the age of t at now.
func since(now, t time.Time) string { return word.Age(now.Sub(t)) }

// ago is how long ago t was, read at now: "just now", "42 seconds ago".
func ago(now, t time.Time) string { return word.Ago(now.Sub(t)) }

// factOf builds the fact line of one Series.
func factOf(s store.AdminSeries, now time.Time) components.Fact {
	f := components.Fact{Site: s.Site, Kind: s.Kind, Checked: "never checked"}
	if s.LatestChapter != nil {
		f.Latest = *s.LatestChapter
		if s.LatestRaisedBy != nil {
			f.RaisedBy = s.RaisedByName
			if f.RaisedBy == "" {
				f.RaisedBy = "a Reader"
			}
		}
	}
	switch {
	case s.CheckedAt.IsZero():
	case !s.Reached():
		// Checked, but every Poll was refused or found no answer: the
		// page was never read (CONTEXT.md, Read and Check).
		f.Checked = "never reached: last tried " + ago(now, s.CheckedAt)
	default:
		f.Checked = "checked " + ago(now, s.CheckedAt)
	}
	if !s.FinishedAt.IsZero() {
		f.Finished = ago(now, s.FinishedAt)
	}
	if s.FailureOutcome != "" { // no failure row
		f.Failure = &components.FailureMarker{Outcome: s.FailureOutcome, Age: since(now, s.FailingSince)}
	}
	return f
}

// urlParam is a route parameter, decoded. chi matches on the escaped path
// whenever the request has one that differs from Go's own encoding (an id
// holding ";" or "," arrives as %3B, %2C) and then hands the parameter back
// still escaped, so such a Series could be listed but never opened.
func urlParam(r *http.Request, name string) string {
	v := chi.URLParam(r, name)
	if r.URL.RawPath == "" {
		return v
	}
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

func seriesHref(site, id string) string {
	return "/admin/series/" + url.PathEscape(site) + "/" + url.PathEscape(id)
}

// webURL is a stored address fit to be a link: absolute http(s) with a host.
// Anything else — a javascript: or data: address a hostile Site page
// planted, a protocol-relative or a relative one — is "" and the page shows
// the address as text only. templ.URL would turn the worst of these into a
// dead about:invalid link, and would let "//host" through.
func webURL(u string) string {
	if u != strings.TrimSpace(u) || strings.ContainsAny(u, "\x00\t\r\n") {
		return ""
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return ""
	}
	return u
}
