package demo

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"

	"github.com/mangabookmark/mangabookmark/adapters"
)

// Each stand-in also serves its Site's latest-updates listing (CONTEXT.md,
// Listing), at the address and with the method its adapter's ListingTarget
// asks for, in the shape of that Site's listing fixtures
// (adapters/testdata/listings/<site>). The rows come from the stand-in's own
// pages as they read now: every Series with a chapter that is not taken
// down, the most recently published first, so a chapter the script releases
// heads page 1 of the next listing read.
const (
	// demoListingPerPage is the rows a page holds where the request does not
	// say (the HTML listings count pages, not rows): fewer than a stand-in's
	// Series, so page 1 says a next page exists and page 2 ends the list.
	demoListingPerPage = 3
	// demoListingPages bounds the page numbers a stand-in answers; past its
	// last row a page is an empty listing, as on the Sites.
	demoListingPages = 20
)

// demoListingSize names, for the Sites whose listing request says how many
// rows it wants, the query parameter that says it (asurascans' limit,
// kagane's size); the stand-in honours it as the Site's API does.
var demoListingSize = map[string]string{"asurascans": "limit", "kagane": "size"}

// demoListed is one row of a stand-in's listing: a Series, its page as it
// reads now, and the stand-in's own number for it (demonicscans' reader
// address names a Series by a number its Series page does not carry).
type demoListed struct {
	Ref   adapters.Ref
	Facts adapters.Facts
	Num   int
}

// demoListingPage is one page of a listing as the renderers see it.
type demoListingPage struct {
	Site    string
	Page    int // 1 being the newest
	PerPage int
	Total   int // rows on every page together
	Rows    []demoListed
	More    bool // a next page exists
}

// listingRequest is the listing page r asks for, when r is a listing request
// at all; wrongMethod when it names a listing address with the method the
// Site does not answer there (a GET of kagane's search).
func listingRequest(site string, r *http.Request) (page int, ok, wrongMethod bool) {
	l, found := adapters.ListerOf(site)
	if !found {
		return 0, false, false
	}
	for p := 1; p <= demoListingPages; p++ {
		t := l.ListingTarget(p)
		u, err := url.Parse(t.URL)
		if err != nil || u.RequestURI() != r.URL.RequestURI() {
			continue
		}
		want := http.MethodGet
		if t.Body != "" {
			want = http.MethodPost
		}
		return p, true, r.Method != want
	}
	return 0, false, false
}

// listingPerPage is how many rows a listing page of the request holds.
func listingPerPage(site string, r *http.Request) int {
	key, ok := demoListingSize[site]
	if !ok {
		return demoListingPerPage
	}
	n, err := strconv.Atoi(r.URL.Query().Get(key))
	if err != nil || n < 1 {
		return demoListingPerPage
	}
	return min(n, adapters.MaxListingEntries)
}

// listing is page of the stand-in's listing, perPage rows to a page, as the
// Site's pages read at this moment.
func (ds *demoSite) listing(page, perPage int) demoListingPage {
	ds.mu.Lock()
	var rows []demoListed
	seq := map[string]int{}
	for i, s := range ds.Series {
		if ds.gone[s.Path] {
			continue
		}
		f, err := readPage(ds.Site, s.Ref, ds.pages[s.Path])
		if err != nil || !f.HasLatest {
			continue
		}
		rows = append(rows, demoListed{Ref: s.Ref, Facts: f, Num: 1000 + i})
		seq[s.Ref.SeriesID] = ds.published[s.Path]
	}
	ds.mu.Unlock()
	// The most recently published first; among the Series the script has
	// not touched, the stand-in's own order.
	slices.SortStableFunc(rows, func(a, b demoListed) int { return cmp.Compare(seq[b.Ref.SeriesID], seq[a.Ref.SeriesID]) })
	out := demoListingPage{Site: ds.Site, Page: page, PerPage: perPage, Total: len(rows)}
	from := min((page-1)*perPage, len(rows))
	to := min(from+perPage, len(rows))
	out.Rows, out.More = rows[from:to], to < len(rows)
	return out
}

// answerListing answers r when it asks for a listing page or the Site's
// home page (the Site's challenge holds on both) and says whether it did.
// The home page is where the browser route sends kagane's POSTed search
// from, as the Site's own page does (fetch's browser_post.go).
func (ds *demoSite) answerListing(w http.ResponseWriter, r *http.Request) bool {
	page, ok, wrongMethod := listingRequest(ds.Site, r)
	home := r.URL.Path == "/" && r.Method == http.MethodGet
	if !ok && !home {
		return false
	}
	ds.mu.Lock()
	challenge := ds.challenge
	ds.mu.Unlock()
	switch {
	case challenge:
		ds.serveChallenge(w)
	case home:
		ds.serveHome(w)
	case wrongMethod:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	default:
		ds.serveListing(w, r, page)
	}
	return true
}

// serveHome is the Site's home page: its newest updates, linked.
func (ds *demoSite) serveHome(w http.ResponseWriter) {
	body, err := renderHTML(demoHomePage, ds.listing(1, demoListingPerPage))
	if err != nil {
		http.Error(w, fmt.Sprintf("demo: %s home page: %v", ds.Site, err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(body)
}

// serveListing answers a listing request.
func (ds *demoSite) serveListing(w http.ResponseWriter, r *http.Request, page int) {
	render, ok := demoListingRenderers[ds.Site]
	if !ok {
		http.NotFound(w, r)
		return
	}
	body, err := render(ds.listing(page, listingPerPage(ds.Site, r)))
	if err != nil {
		http.Error(w, fmt.Sprintf("demo: %s listing: %v", ds.Site, err), http.StatusInternalServerError)
		return
	}
	if ds.api {
		w.Header().Set("Content-Type", "application/json")
	} else {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	_, _ = w.Write(body)
}

// href is an address on the Site as its own pages write it: the path (and
// query) without scheme and host.
func href(abs string) string {
	u, err := url.Parse(abs)
	if err != nil {
		return ""
	}
	u.Scheme, u.Host, u.User = "", "", nil
	return u.String()
}

// lastSegment is the last path segment of an address (kagane's book id).
func lastSegment(abs string) string {
	u, err := url.Parse(abs)
	if err != nil {
		return ""
	}
	return path.Base(u.Path)
}
