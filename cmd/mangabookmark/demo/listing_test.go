package demo

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/fetch"
	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/word"
)

const testFixtures = "../../../adapters/testdata"

// standIns serves every Site's stand-in as the demo does, and returns them
// with the SITE_BASE_URLS value the demo hands its server.
func standIns(t *testing.T) (*demoWorld, string) {
	t.Helper()
	sites, err := loadDemoSites(testFixtures)
	if err != nil {
		t.Fatal(err)
	}
	w, bases, down, err := startStandIns(demoOptions{fixtures: testFixtures, clock: &demoClock{}}, sites, io.Discard)
	t.Cleanup(down)
	if err != nil {
		t.Fatal(err)
	}
	return w, strings.Join(bases, ",")
}

// standInReader is the server's Reader on the stand-ins: SITE_BASE_URLS and
// BROWSER_SITES as the demo sets them.
func standInReader(t *testing.T, siteBaseURLs, browserSites, ws string) *fetch.Reader {
	t.Helper()
	bases, err := fetch.ParseBaseURLs(siteBaseURLs)
	if err != nil {
		t.Fatal(err)
	}
	routes, err := word.ParseBrowserSites(browserSites)
	if err != nil {
		t.Fatal(err)
	}
	return fetch.NewReader(fetch.ReaderOptions{BaseURLs: bases, BrowserSites: routes, BrowserWSURL: ws,
		Timeout: 30 * time.Second, ChallengeWait: 10 * time.Second, Spacing: 10 * time.Millisecond})
}

// wholeListing reads a Site's listing from page 1 for as long as a page says
// a next one exists, and returns its entries in order and the pages read.
func wholeListing(t *testing.T, r *fetch.Reader, site string) ([]adapters.ListingEntry, int) {
	t.Helper()
	var out []adapters.ListingEntry
	for page := 1; page <= demoListingPages; page++ {
		got := r.ReadListing(context.Background(), site, page)
		if got.Outcome != word.OK {
			t.Fatalf("%s listing page %d: outcome %q (%v)", site, page, got.Outcome, got.Err)
		}
		out = append(out, got.Listing.Entries...)
		if !got.Listing.More {
			return out, page
		}
	}
	t.Fatalf("%s: the listing still says a next page exists after %d pages", site, demoListingPages)
	return nil, 0
}

// Every stand-in serves its Site's latest-updates listing where the Site's
// ListingTarget asks for it, in the shape its ParseListing reads: through the
// real Reader with SITE_BASE_URLS on the stand-ins (the plain route, as the
// demo without a sidecar reads every Site), the pages together name each
// Series with a chapter, with
// the chapter the Series' own page reads, and a chapter the Site then
// publishes heads page 1 of the next read.
func TestTheStandInsServeTheirSitesListings(t *testing.T) {
	w, bases := standIns(t)
	r := standInReader(t, bases, "none", "")
	ctx := context.Background()

	if got := r.ReadListing(ctx, demoHostile, 1); got.Outcome != word.Refused {
		t.Errorf("%s holds a challenge, yet its listing read %q (%v)", demoHostile, got.Outcome, got.Err)
	}
	w.sites[demoHostile].Challenge(false)

	for _, site := range word.SiteNames() {
		t.Run(site, func(t *testing.T) {
			ds := w.sites[site]
			want := map[adapters.Ref]word.Chapter{}
			for _, s := range ds.Series {
				if res := r.Read(ctx, site, s.Ref.URL); res.Outcome == word.OK {
					want[s.Ref] = word.Chapter(res.Facts.LatestChapter)
				}
			}
			entries, pages := wholeListing(t, r, site)
			got := map[adapters.Ref]word.Chapter{}
			for _, e := range entries {
				got[e.Ref] = e.Chapter
			}
			if len(want) < 2 || len(entries) != len(want) || !mapsEqual(got, want) {
				t.Fatalf("the listing names %v, want each Series with a chapter as its page reads: %v", entries, want)
			}
			perPage := demoListingPerPage
			if _, sized := demoListingSize[site]; sized {
				perPage = len(want) // the request asks for more rows than the stand-in has
			}
			if wantPages := (len(want) + perPage - 1) / perPage; pages != wantPages {
				t.Errorf("%d pages read, want %d (%d rows, %d a page)", pages, wantPages, len(want), perPage)
			}

			// The Series listed last publishes: it comes first.
			last := entries[len(entries)-1].Ref
			i := slices.IndexFunc(ds.Series, func(s demoSeries) bool { return s.Ref == last })
			next, err := ds.Publish(ds.Series[i].File)
			if err != nil {
				t.Fatal(err)
			}
			res := r.ReadListing(ctx, site, 1)
			if res.Outcome != word.OK || len(res.Listing.Entries) == 0 {
				t.Fatalf("listing after the release: outcome %q (%v), %d entries", res.Outcome, res.Err, len(res.Listing.Entries))
			}
			if first := res.Listing.Entries[0]; first.Ref != last || first.Chapter != word.Chapter(next) {
				t.Errorf("after %s published chapter %s the listing starts with %+v", last.URL, next, first)
			}
			if page := r.Read(ctx, site, last.URL); page.Facts.LatestChapter != next {
				t.Errorf("the Series page reads %q, the listing %s", page.Facts.LatestChapter, next)
			}
		})
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// A Series the Site takes down leaves its listing, and kagane's search
// address answers only the POST the Site's search takes.
func TestTheStandInListingsFollowTheSite(t *testing.T) {
	sites, err := loadDemoSites(testFixtures)
	if err != nil {
		t.Fatal(err)
	}
	for _, ds := range sites {
		switch ds.Site {
		case demoTakenSite:
			if err := ds.TakeDown(demoTakenFile, true); err != nil {
				t.Fatal(err)
			}
			gone, _ := ds.series(demoTakenFile)
			l, _ := adapters.ListerOf(ds.Site)
			for page := 1; page <= 2; page++ {
				body := standInAnswer(t, ds, l.ListingTarget(page), http.StatusOK)
				got, err := l.ParseListing(body)
				if err != nil {
					t.Fatal(err)
				}
				if slices.ContainsFunc(got.Entries, func(e adapters.ListingEntry) bool { return e.Ref == gone.Ref }) {
					t.Errorf("page %d still lists the taken-down %s", page, gone.Ref.URL)
				}
			}
		case "kagane":
			l, _ := adapters.ListerOf(ds.Site)
			get := l.ListingTarget(1)
			get.Body = ""
			standInAnswer(t, ds, get, http.StatusMethodNotAllowed)
		}
	}
}

// standInAnswer sends t's request to the stand-in and returns the body,
// failing unless the status is want.
func standInAnswer(t *testing.T, ds *demoSite, target adapters.Target, want int) []byte {
	t.Helper()
	method, body := http.MethodGet, io.Reader(nil)
	if target.Body != "" {
		method, body = http.MethodPost, strings.NewReader(target.Body)
	}
	rec := httptest.NewRecorder()
	ds.ServeHTTP(rec, httptest.NewRequest(method, target.URL, body))
	if rec.Code != want {
		t.Fatalf("%s %s: %d, want %d", method, target.URL, rec.Code, want)
	}
	return rec.Body.Bytes()
}

// With the sidecar the demo reads comix and kagane on the browser route, and
// their listings are read there too: comix's browse page (the route waits
// for its initial-data), and kagane's search, POSTed from the stand-in's
// home page as the Site's own page would.
func TestTheBrowserStandInsListingsReadOnTheBrowserRoute(t *testing.T) {
	browser := chromiumtest.Start(t)
	w, bases := standIns(t)
	r := standInReader(t, bases, "comix,kagane", browser.WSURL)
	entries, _ := wholeListing(t, r, "comix")
	if len(entries) == 0 {
		t.Fatal("the comix listing read nothing on the browser route")
	}
	ds := w.sites["comix"]
	next, err := ds.Publish(demoPublished[3].file)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ds.series(demoPublished[3].file)
	got := r.ReadListing(context.Background(), "comix", 1)
	if got.Outcome != word.OK || len(got.Listing.Entries) == 0 || got.Listing.Entries[0].Ref != s.Ref || got.Listing.Entries[0].Chapter != word.Chapter(next) {
		t.Errorf("after the release: outcome %q (%v), entries %+v; want %s at %s first", got.Outcome, got.Err, got.Listing.Entries, s.Ref.URL, next)
	}
	k := w.sites["kagane"]
	want := 0
	for _, s := range k.Series {
		if f, _ := readPage(k.Site, s.Ref, k.pages[s.Path]); f.HasLatest {
			want++
		}
	}
	if got, _ := wholeListing(t, r, "kagane"); len(got) != want || want == 0 {
		t.Errorf("kagane's listing on the browser route: %+v, want its %d Series with a chapter", got, want)
	}
}

// The demo's Lanes read the stand-ins' listings: with every Site's own pace
// far longer than the test, each chapter the script releases on a Series Ada
// bookmarks is written as its Latest Chapter within one listing interval
// plus a few spacings (and slack for a loaded machine), its Arrival says the
// listing named it first, and the console says so.
func TestTheDemoListingFindsANewChapterWithinOneInterval(t *testing.T) {
	t.Parallel()
	const (
		every = 5 * time.Second
		pace  = 10 * time.Minute
		slack = 5 * time.Second
		// browserSlack: on the browser route the listing page and the
		// Series page are each a Chromium navigation, seconds apiece on a
		// loaded two-core machine running other browser tests.
		browserSlack = 20 * time.Second
	)
	d := startDemoWith(t, func(o *demoOptions) { o.pace, o.listingEvery = pace, every })
	type watched struct {
		site, id, title, before string
		slack                   time.Duration
	}
	var series []watched
	for _, p := range demoPublished {
		if p.site == "comix" && d.w.sidecar == nil {
			continue // not polled without the sidecar
		}
		if demoReaders[0].behind[p.file] != 0 {
			t.Fatalf("%s/%s is not a page Ada bookmarks", p.site, p.file)
		}
		w := watched{site: p.site, id: d.seriesID(p.site, p.file), slack: slack}
		if p.site == "comix" {
			w.slack = browserSlack
		}
		d.waitFor("a first Latest Chapter for "+p.site, func() (bool, string) {
			w.before = d.scalar(`SELECT latest_chapter_num::text FROM series WHERE site = $1 AND series_id = $2`, w.site, w.id)
			return w.before != "", w.before
		})
		w.title = d.scalar(`SELECT title FROM series WHERE site = $1 AND series_id = $2`, w.site, w.id)
		series = append(series, w)
	}
	// Past the first reads, only the listing makes these Series due again
	// within the test: their pace is ten minutes.
	d.play("publish")
	released := time.Now()
	for _, w := range series {
		var next string
		d.waitFor("the released chapter of "+w.site+" as its Latest Chapter", func() (bool, string) {
			next = d.scalar(`SELECT latest_chapter_num::text FROM series WHERE site = $1 AND series_id = $2`, w.site, w.id)
			return next != w.before, next
		})
		if took, bound := time.Since(released), every+3*demoSpacing+w.slack; took > bound {
			t.Errorf("%s: chapter %s was written %v after its release, want within %v (LISTING_EVERY %v, pace %v)", w.site, next, took, bound, every, pace)
		}
		listed := d.scalar(`SELECT bool_and(listed)::text FROM chapter_arrivals WHERE site = $1 AND series_id = $2 AND chapter_num = $3::numeric`, w.site, w.id, next)
		if listed != "true" {
			t.Errorf("%s: the Arrival of chapter %s: listed = %q, want true (named by the listing before its page confirmed it)", w.site, next, listed)
		}
		line := fmt.Sprintf("demo: %s %q chapter %s written ", w.site, w.title, next)
		d.waitFor("the console line for "+w.site, func() (bool, string) {
			out := d.stdout.String()
			i := strings.Index(out, line)
			return i >= 0 && strings.Contains(out[i:], "named by the listing"), tail(out, 600)
		})
	}
}
