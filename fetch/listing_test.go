package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/word"
)

// listingFixture reads adapters/testdata/listings/<site>/<file>.
func listingFixture(t *testing.T, site, file string) []byte {
	t.Helper()
	return readFixture(t, filepath.Join("listings", site), file)
}

// parsedListing is what the Site's own listing reader makes of a body: what
// ReadListing must hand on (the adapters' tests pin the rows themselves).
func parsedListing(t *testing.T, site string, body []byte) adapters.Listing {
	t.Helper()
	l, _ := adapters.ListerOf(site)
	got, err := l.ParseListing(body)
	if err != nil {
		t.Fatalf("%s: ParseListing: %v", site, err)
	}
	return got
}

// listingPath is the path and query a Site's listing page is asked for under
// SITE_BASE_URLS.
func listingPath(t *testing.T, site string, page int) string {
	t.Helper()
	l, _ := adapters.ListerOf(site)
	u, err := url.Parse(l.ListingTarget(page).URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.RequestURI()
}

func TestReadListingOutcomes(t *testing.T) {
	tests := []struct {
		name        string
		site        string
		handler     func(t *testing.T) http.HandlerFunc
		want        word.Outcome
		wantChecked bool
		check       func(t *testing.T, got adapters.ListingResult)
	}{
		{
			name: "a listing page is read into its entries", site: "asurascans",
			handler: serveBody(listingFixtureOf("asurascans", "latest.json")), want: word.OK, wantChecked: true,
			check: func(t *testing.T, got adapters.ListingResult) {
				want := parsedListing(t, "asurascans", listingFixture(t, "asurascans", "latest.json"))
				if len(got.Listing.Entries) == 0 || !reflect.DeepEqual(got.Listing, want) {
					t.Errorf("listing %+v, want %+v", got.Listing, want)
				}
			},
		},
		{
			name: "an HTML listing page is read into its entries", site: "demonicscans",
			handler: serveBody(listingFixtureOf("demonicscans", "latest.html")), want: word.OK, wantChecked: true,
			check: func(t *testing.T, got adapters.ListingResult) {
				want := parsedListing(t, "demonicscans", listingFixture(t, "demonicscans", "latest.html"))
				if len(got.Listing.Entries) == 0 || !reflect.DeepEqual(got.Listing, want) {
					t.Errorf("listing %+v, want %+v", got.Listing, want)
				}
			},
		},
		{
			name: "a real listing without rows is ok with no entries", site: "asurascans",
			handler: serveBody(listingFixtureOf("asurascans", "empty.json")), want: word.OK, wantChecked: true,
			check: func(t *testing.T, got adapters.ListingResult) {
				if len(got.Listing.Entries) != 0 || got.Err != nil {
					t.Errorf("listing %+v (err %v), want no entries", got.Listing, got.Err)
				}
			},
		},
		{
			name: "a challenge is refused", site: "demonicscans",
			handler: func(t *testing.T) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("cf-mitigated", "challenge")
					w.WriteHeader(http.StatusForbidden)
					w.Write(readFixture(t, "challenge", "cloudflare.html"))
				}
			},
			want: word.Refused,
		},
		{
			name: "a 429 is refused with its Retry-After", site: "asurascans",
			handler: func(t *testing.T) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Retry-After", "120")
					w.WriteHeader(http.StatusTooManyRequests)
				}
			},
			want: word.Refused,
			check: func(t *testing.T, got adapters.ListingResult) {
				if got.RetryAfter != 2*time.Minute || got.Status != http.StatusTooManyRequests {
					t.Errorf("RetryAfter %v status %d, want 2m and 429", got.RetryAfter, got.Status)
				}
			},
		},
		{
			name: "a 500 is errors", site: "asurascans",
			handler: func(t *testing.T) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) }
			},
			want: word.Errors, wantChecked: true,
		},
		{
			name: "a 404 is not_found", site: "asurascans",
			handler: func(t *testing.T) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }
			},
			want: word.NotFound, wantChecked: true,
		},
		{
			name: "a Series page where the listing should be is no_chapter", site: "demonicscans",
			handler: func(t *testing.T) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) { w.Write(readFixture(t, "demonicscans", "ongoing.html")) }
			},
			want: word.NoChapter, wantChecked: true,
			check: func(t *testing.T, got adapters.ListingResult) {
				if !errors.Is(got.Err, adapters.ErrNotListing) || len(got.Listing.Entries) != 0 {
					t.Errorf("err %v entries %d, want ErrNotListing and none", got.Err, len(got.Listing.Entries))
				}
			},
		},
		{
			name: "an HTML page where the JSON listing should be is no_chapter", site: "asurascans",
			handler: func(t *testing.T) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) { w.Write(readFixture(t, "asurascans", "ongoing.html")) }
			},
			want: word.NoChapter, wantChecked: true,
			check: func(t *testing.T, got adapters.ListingResult) {
				if !errors.Is(got.Err, adapters.ErrNotListing) {
					t.Errorf("err %v, want ErrNotListing", got.Err)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := listingPath(t, tc.site, 1)
			h := tc.handler(t)
			srv := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.RequestURI() != want || r.Method != http.MethodGet {
					t.Errorf("%s %s, want GET %s", r.Method, r.URL.RequestURI(), want)
				}
				h(w, r)
			})
			got := readerFor(t, tc.site, srv, nil).ReadListing(context.Background(), tc.site, 1)
			if got.Outcome != tc.want || got.Checked != tc.wantChecked {
				t.Fatalf("outcome %q checked %v (err %v), want %q checked %v", got.Outcome, got.Checked, got.Err, tc.want, tc.wantChecked)
			}
			if (got.Outcome == word.OK) != (got.Err == nil) {
				t.Errorf("outcome %q with err %v", got.Outcome, got.Err)
			}
			if srv.hits.Load() != 1 {
				t.Errorf("%d requests, want 1", srv.hits.Load())
			}
			if tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

// listingFixtureOf defers reading a listing fixture to the test that serves it.
func listingFixtureOf(site, file string) func(t *testing.T) []byte {
	return func(t *testing.T) []byte { return listingFixture(t, site, file) }
}

// serveBody serves one body with 200.
func serveBody(body func(t *testing.T) []byte) func(t *testing.T) http.HandlerFunc {
	return func(t *testing.T) http.HandlerFunc {
		b := body(t)
		return func(w http.ResponseWriter, r *http.Request) { w.Write(b) }
	}
}

// Kagane's listing is a search POSTed with a JSON filter body, as the
// reference sends it; on the plain route the stand-in receives exactly that.
func TestReadListingPostsKaganesSearch(t *testing.T) {
	const wantBody = `{"source_type":["Official","Unofficial","Mixed"],"content_lang":["en"]}`
	page := listingFixture(t, "kagane", "page.json")
	wantURI := listingPath(t, "kagane", 2)
	srv := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.RequestURI() != wantURI ||
			r.Header.Get("Content-Type") != "application/json" || string(body) != wantBody {
			t.Errorf("got %s %s (Content-Type %q) body %s; want POST %s application/json %s",
				r.Method, r.URL.RequestURI(), r.Header.Get("Content-Type"), body, wantURI, wantBody)
			http.Error(w, "not the search", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(page)
	})
	got := readerFor(t, "kagane", srv, nil).ReadListing(context.Background(), "kagane", 2)
	if got.Outcome != word.OK || !got.Checked || got.Status != 200 {
		t.Fatalf("outcome %q checked %v status %d (err %v), want ok", got.Outcome, got.Checked, got.Status, got.Err)
	}
	if want := parsedListing(t, "kagane", page); len(got.Listing.Entries) == 0 || !reflect.DeepEqual(got.Listing, want) {
		t.Errorf("listing %+v, want %+v", got.Listing, want)
	}
	if srv.hits.Load() != 1 {
		t.Errorf("%d requests, want 1", srv.hits.Load())
	}
}

// The browser route only navigates: a POST target on a browser Site (Kagane
// by default) is errors, says why, and sends nothing, sidecar or not.
func TestReadListingOfAPostOnTheBrowserRouteIsErrors(t *testing.T) {
	srv := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request reached the stand-in: %s %s", r.Method, r.URL)
	})
	for _, ws := range []string{"", "ws://127.0.0.1:1"} {
		r := readerFor(t, "kagane", srv, func(o *ReaderOptions) {
			o.BrowserSites, o.BrowserWSURL = nil, ws // the default: kagane on the browser route
		})
		got := r.ReadListing(context.Background(), "kagane", 1)
		if got.Outcome != word.Errors || got.Checked || !errors.Is(got.Err, ErrBrowserPOST) ||
			!strings.Contains(got.Err.Error(), "cannot POST") {
			t.Errorf("sidecar %q: outcome %q checked %v err %v, want errors: %v", ws, got.Outcome, got.Checked, got.Err, ErrBrowserPOST)
		}
	}
}

// A listing address passes the gate as a Series address does: without a
// SITE_BASE_URLS rewrite, a Site resolving to loopback is unfetchable and
// nothing is sent.
func TestReadListingGoesThroughTheGate(t *testing.T) {
	browserSites, _ := word.ParseBrowserSites("none")
	r := NewReader(ReaderOptions{BrowserSites: browserSites, Timeout: 3 * time.Second,
		Resolve: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}})
	got := r.ReadListing(context.Background(), "asurascans", 1)
	if got.Outcome != word.Unfetchable || !errors.Is(got.Err, ErrGate) {
		t.Errorf("outcome %q err %v, want unfetchable by the gate", got.Outcome, got.Err)
	}
	if got := r.ReadListing(context.Background(), "nosuchsite", 1); got.Outcome != word.Unfetchable {
		t.Errorf("unknown site: outcome %q", got.Outcome)
	}
}

// A listing request takes the Site's turn as a Poll does: listing reads and
// a Series Read to one Site arrive at least a spacing apart.
func TestReadListingSharesTheSitesSpacing(t *testing.T) {
	var mu sync.Mutex
	var arrivals []time.Time
	listing := listingFixture(t, "asurascans", "latest.json")
	series := readFixture(t, "asurascans", "ongoing.html")
	srv := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/comics/") {
			w.Write(series)
			return
		}
		w.Write(listing)
	})
	const spacing = 150 * time.Millisecond
	r := readerFor(t, "asurascans", srv, func(o *ReaderOptions) { o.Spacing = spacing })
	var calls []time.Time
	reads := []func() word.Outcome{
		func() word.Outcome { return r.ReadListing(context.Background(), "asurascans", 1).Outcome },
		func() word.Outcome { return r.Read(context.Background(), "asurascans", asuraSeries).Outcome },
		func() word.Outcome { return r.ReadListing(context.Background(), "asurascans", 2).Outcome },
	}
	for i, read := range reads {
		calls = append(calls, time.Now())
		if got := read(); got != word.OK {
			t.Fatalf("read %d: outcome %q", i, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(arrivals) != len(reads) {
		t.Fatalf("%d requests reached the stand-in, want %d", len(arrivals), len(reads))
	}
	// As in TestSpacingKeepsRequestsToOneSiteApart: each request arrives at
	// least a spacing after the previous read was called, whichever kind.
	for i := 1; i < len(arrivals); i++ {
		if gap := arrivals[i].Sub(calls[i-1]); gap < spacing {
			t.Errorf("request %d arrived %v after read %d was called, want at least %v", i, gap, i-1, spacing)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := r.ReadListing(ctx, "asurascans", 1); got.Outcome != word.Errors {
		t.Errorf("a cancelled wait read as %q", got.Outcome)
	}
}

// On the browser route a listing read waits for the listing's own anchor
// (ListingReadySelector), not the Series page's chapter list: Comix's
// initial-data arriving after load is waited for, and the read ends as soon
// as it is there.
func TestReadListingOnTheBrowserRouteWaitsForTheListing(t *testing.T) {
	ws := chromiumtest.Start(t).WSURL
	page := string(listingFixture(t, "comix", "latest.html"))
	if !strings.Contains(page, `<script id="initial-data"`) {
		t.Fatal("fixture has no initial-data")
	}
	later := strings.Replace(page, `<script id="initial-data"`, `<script id="later-data"`, 1)
	later = strings.Replace(later, "</body>",
		`<script>setTimeout(() => { document.getElementById('later-data').id = 'initial-data'; }, 300);</script></body>`, 1)
	srv := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(later))
	})
	const bound = 20 * time.Second
	r := browserReader(t, "comix", srv, ws, func(o *ReaderOptions) { o.ChallengeWait = bound })
	start := time.Now()
	got := r.ReadListing(context.Background(), "comix", 1)
	if got.Outcome != word.OK || !got.Checked {
		t.Fatalf("outcome %q checked %v (err %v), want ok", got.Outcome, got.Checked, got.Err)
	}
	if want := parsedListing(t, "comix", []byte(page)); len(got.Listing.Entries) == 0 || !reflect.DeepEqual(got.Listing.Entries, want.Entries) {
		t.Errorf("listing %+v, want %+v", got.Listing, want)
	}
	// Waiting for the Series page's selector would run to the bound.
	if took := time.Since(start); took > bound*3/4 {
		t.Errorf("the read took %v: it waited for something the listing lacks", took)
	}
}
