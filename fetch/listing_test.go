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
	"sync/atomic"
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

// kaganeStandIn is a loopback Kagane for a listing read: "/" is its home
// page, whose own script wraps window.fetch to answer a forged listing (the
// POST must not be the page's to fake), and a POST of the search with the
// reference's body gets answer. Anything else fails the test. It keeps the
// order of the requests it saw.
type kaganeStandIn struct {
	*siteServer
	mu   sync.Mutex
	seen []string
}

const kaganeSearchBody = `{"source_type":["Official","Unofficial","Mixed"],"content_lang":["en"]}`

const kaganeHome = `<!doctype html><html><head><title>Kagane</title></head><body><main>Kagane</main>
<script>window.fetch = async () => new Response('{"content":[],"last":true}', {status: 200});</script>
</body></html>`

func newKaganeStandIn(t *testing.T, page int, answer http.HandlerFunc) *kaganeStandIn {
	t.Helper()
	wantURI := listingPath(t, "kagane", page)
	k := &kaganeStandIn{}
	k.siteServer = newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.seen = append(k.seen, r.Method+" "+r.URL.RequestURI())
		k.mu.Unlock()
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(kaganeHome))
		case r.Method == http.MethodGet && r.URL.Path == "/favicon.ico":
			http.NotFound(w, r)
		case r.Method == http.MethodPost && r.URL.RequestURI() == wantURI:
			body, _ := io.ReadAll(r.Body)
			if ct := r.Header.Get("Content-Type"); ct != "application/json" || string(body) != kaganeSearchBody {
				t.Errorf("POST %s with Content-Type %q body %s; want application/json %s", wantURI, ct, body, kaganeSearchBody)
				http.Error(w, "not the search", http.StatusBadRequest)
				return
			}
			answer(w, r)
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL.RequestURI())
			http.Error(w, "unexpected", http.StatusTeapot)
		}
	})
	return k
}

// posts counts the search POSTs the stand-in received.
func (k *kaganeStandIn) posts() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return countPrefix(k.seen, "POST ")
}

// On the browser route (Kagane's by default) the listing search is POSTed
// from the Site's home page, as the page itself would: the stand-in sees the
// home page first, then one POST with the reference's JSON body, and the
// Reader hands on the parsed entries, not what the page's own scripts forged.
func TestReadListingPostsKaganesSearchOnTheBrowserRoute(t *testing.T) {
	ws := chromiumtest.Start(t).WSURL
	page := listingFixture(t, "kagane", "page.json")
	k := newKaganeStandIn(t, 2, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(page)
	})
	r := browserReader(t, "kagane", k.siteServer, ws, func(o *ReaderOptions) { o.BrowserSites = nil })
	if r.Route("kagane") != word.RouteBrowser {
		t.Fatalf("kagane reads over %q by default, want the browser route", r.Route("kagane"))
	}
	got := r.ReadListing(context.Background(), "kagane", 2)
	if got.Outcome != word.OK || !got.Checked || got.Status != 200 || got.Err != nil {
		t.Fatalf("outcome %q checked %v status %d (err %v), want ok", got.Outcome, got.Checked, got.Status, got.Err)
	}
	if want := parsedListing(t, "kagane", page); len(got.Listing.Entries) == 0 || !reflect.DeepEqual(got.Listing, want) {
		t.Errorf("listing %+v, want %+v", got.Listing, want)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.seen) == 0 || k.seen[0] != "GET /" {
		t.Errorf("requests %q, want the home page first", k.seen)
	}
	if n := countPrefix(k.seen, "POST "); n != 1 {
		t.Errorf("%d POSTs (%q), want 1", n, k.seen)
	}
}

func countPrefix(ss []string, prefix string) int {
	n := 0
	for _, s := range ss {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// The answer to the browser route's POST is classified as the plain route's
// is, by the same table: the same outcome, Checked, status and Retry-After
// for a plain 403, a challenge, a 429 and an answer over the body cap.
func TestReadListingPostAnswersClassifyAlikeOnBothRoutes(t *testing.T) {
	ws := chromiumtest.Start(t).WSURL
	page := listingFixture(t, "kagane", "page.json")
	challenge := readFixture(t, "challenge", "cloudflare.html")
	const maxBody = 512
	if len(page) <= maxBody {
		t.Fatalf("the fixture (%d bytes) must be over the test's cap", len(page))
	}
	tests := []struct {
		name        string
		answer      http.HandlerFunc
		cap         bool
		want        word.Outcome
		wantChecked bool
		wantStatus  int
		wantRetry   time.Duration
		wantErr     string
	}{
		{name: "a plain 403 is errors", answer: func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "forbidden", http.StatusForbidden)
		}, want: word.Errors, wantChecked: true, wantStatus: 403},
		{name: "a challenge is refused", answer: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("cf-mitigated", "challenge")
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusForbidden)
			w.Write(challenge)
		}, want: word.Refused, wantStatus: 403},
		{name: "a 429 is refused with its Retry-After", answer: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
		}, want: word.Refused, wantStatus: 429, wantRetry: 2 * time.Minute},
		{name: "an answer over the body cap is errors", cap: true, answer: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(page)
		}, want: word.Errors, wantChecked: true, wantStatus: 200, wantErr: "body larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := newKaganeStandIn(t, 1, tc.answer)
			tweak := func(o *ReaderOptions) {
				if tc.cap {
					o.MaxBody = maxBody
				}
			}
			routes := map[string]*Reader{
				"plain":   readerFor(t, "kagane", k.siteServer, tweak),
				"browser": browserReader(t, "kagane", k.siteServer, ws, tweak),
			}
			for _, route := range []string{"plain", "browser"} {
				got := routes[route].ReadListing(context.Background(), "kagane", 1)
				if got.Outcome != tc.want || got.Checked != tc.wantChecked || got.Status != tc.wantStatus || got.RetryAfter != tc.wantRetry {
					t.Errorf("%s: outcome %q checked %v status %d retry %v (err %v), want %q %v %d %v",
						route, got.Outcome, got.Checked, got.Status, got.RetryAfter, got.Err, tc.want, tc.wantChecked, tc.wantStatus, tc.wantRetry)
				}
				if got.Err == nil || !strings.Contains(got.Err.Error(), tc.wantErr) || len(got.Listing.Entries) != 0 {
					t.Errorf("%s: err %v entries %d, want an error saying %q and no entries", route, got.Err, len(got.Listing.Entries), tc.wantErr)
				}
			}
			if n := k.posts(); n != 2 {
				t.Errorf("%d POSTs reached the stand-in, want one per route", n)
			}
		})
	}
}

// The browser route's POST is one of the tab's requests, checked like every
// other: redirected to an address outside the Site (a loopback canary) it
// is blocked, the read is unfetchable as on the plain route, and the canary
// receives nothing.
func TestReadListingPostRedirectedOffTheSiteIsUnfetchableOnBothRoutes(t *testing.T) {
	ws := chromiumtest.Start(t).WSURL
	can := newCanary(t)
	k := newKaganeStandIn(t, 1, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, can.srv.URL+"/search", http.StatusTemporaryRedirect)
	})
	for route, r := range map[string]*Reader{
		"plain":   readerFor(t, "kagane", k.siteServer, nil),
		"browser": browserReader(t, "kagane", k.siteServer, ws, nil),
	} {
		got := r.ReadListing(context.Background(), "kagane", 1)
		if got.Outcome != word.Unfetchable || !errors.Is(got.Err, ErrGate) {
			t.Errorf("%s: outcome %q (err %v), want unfetchable by the gate", route, got.Outcome, got.Err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if h := can.hits.Load(); h != 0 {
		t.Errorf("the canary got %d requests", h)
	}
}

// A home page the Site refuses is the Site's answer: a 429 there is refused
// with its Retry-After, and the search is never POSTed.
func TestReadListingPostIsNotSentWhenTheHomePageIsRefused(t *testing.T) {
	ws := chromiumtest.Start(t).WSURL
	var posts atomic.Int32
	srv := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		// With a body: Chromium shows its own error page for an empty one.
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte("slow down"))
	})
	got := browserReader(t, "kagane", srv, ws, nil).ReadListing(context.Background(), "kagane", 1)
	if got.Outcome != word.Refused || got.Status != http.StatusTooManyRequests || got.RetryAfter != time.Minute {
		t.Errorf("outcome %q status %d retry %v (err %v), want refused, 429, 1m", got.Outcome, got.Status, got.RetryAfter, got.Err)
	}
	if n := posts.Load(); n != 0 {
		t.Errorf("%d POSTs reached the stand-in after its home page was refused", n)
	}
}

// Without a sidecar the browser route's POST is unreachable like any other
// browser read, and nothing is sent.
func TestReadListingPostWithoutASidecarIsUnreachable(t *testing.T) {
	srv := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request reached the stand-in: %s %s", r.Method, r.URL)
	})
	r := readerFor(t, "kagane", srv, func(o *ReaderOptions) { o.BrowserSites = nil })
	got := r.ReadListing(context.Background(), "kagane", 1)
	if got.Outcome != word.Unreachable || got.Checked || !errors.Is(got.Err, ErrNoBrowser) {
		t.Errorf("outcome %q checked %v err %v, want unreachable: %v", got.Outcome, got.Checked, got.Err, ErrNoBrowser)
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
