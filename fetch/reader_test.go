package fetch

import (
	"compress/gzip"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/word"
)

const asuraSeries = "https://asurascans.com/comics/nano-machine"

// readFixture reads one of the adapters' fixtures: the pages the Sites serve
// are kept once, beside the parsers that read them.
func readFixture(t testing.TB, site, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "adapters", "testdata", site, file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// siteServer is a stand-in Site on a loopback httptest server, counting requests.
type siteServer struct {
	*httptest.Server
	hits atomic.Int64
}

func newSiteServer(t *testing.T, h http.HandlerFunc) *siteServer {
	t.Helper()
	s := &siteServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// readerFor points site at srv through SITE_BASE_URLS, the plain route only.
func readerFor(t *testing.T, site string, srv *siteServer, tweak func(*ReaderOptions)) *Reader {
	t.Helper()
	bases, err := ParseBaseURLs(site + "=" + srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	browserSites, _ := word.ParseBrowserSites("none")
	o := ReaderOptions{BaseURLs: bases, BrowserSites: browserSites, Timeout: 3 * time.Second}
	if tweak != nil {
		tweak(&o)
	}
	return NewReader(o)
}

// TestClassificationTable serves each rule's example answer and reads it through
// the plain route: the table the code uses is the table the tests check.
func TestClassificationTable(t *testing.T) {
	want := map[verdict]word.Outcome{verdictRefused: word.Refused, verdictNotFound: word.NotFound, verdictErrors: word.Errors, verdictParse: word.OK}
	wantChecked := map[verdict]bool{verdictRefused: false, verdictNotFound: true, verdictErrors: true, verdictParse: true}
	page := readFixture(t, "asurascans", "ongoing.html")
	for _, rule := range classification {
		t.Run(rule.name, func(t *testing.T) {
			ex := rule.example
			srv := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range ex.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(ex.status)
				if rule.verdict == verdictParse {
					w.Write(page)
					return
				}
				w.Write([]byte(ex.body))
			})
			got := readerFor(t, "asurascans", srv, nil).Read(context.Background(), "asurascans", asuraSeries)
			if got.Outcome != want[rule.verdict] {
				t.Fatalf("outcome %q (err %v), want %q", got.Outcome, got.Err, want[rule.verdict])
			}
			if got.Checked != wantChecked[rule.verdict] {
				t.Errorf("Checked = %v, want %v", got.Checked, wantChecked[rule.verdict])
			}
			if got.Status != ex.status {
				t.Errorf("Status = %d, want %d", got.Status, ex.status)
			}
			if v, name := classify(ex.status, headerOf(ex.header), []byte(ex.body)); v != rule.verdict || name != rule.name {
				t.Errorf("classify(example) = %v by %q, want this rule", v, name)
			}
		})
	}
}

func headerOf(m map[string]string) http.Header {
	h := http.Header{}
	for k, v := range m {
		h.Set(k, v)
	}
	return h
}

func TestReadOutcomes(t *testing.T) {
	page := readFixture(t, "asurascans", "ongoing.html")
	tests := []struct {
		name        string
		handler     http.HandlerFunc
		want        word.Outcome
		wantChecked bool
		check       func(t *testing.T, r adapters.Result)
	}{
		{
			name:    "a Series page yields ok with its facts",
			handler: func(w http.ResponseWriter, r *http.Request) { w.Write(page) },
			want:    word.OK, wantChecked: true,
			check: func(t *testing.T, r adapters.Result) {
				if r.Facts.LatestChapter != "271" || r.Facts.Title != "Nano Machine" {
					t.Errorf("facts %+v", r.Facts)
				}
			},
		},
		{
			name: "a gzip-encoded page is decoded",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
					http.Error(w, "want gzip", 400)
					return
				}
				w.Header().Set("Content-Encoding", "gzip")
				zw := gzip.NewWriter(w)
				zw.Write(page)
				zw.Close()
			},
			want: word.OK, wantChecked: true,
		},
		{
			name: "the request names the project in its User-Agent",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasPrefix(r.UserAgent(), "mangabookmark/") {
					http.Error(w, "who are you", 400)
					return
				}
				w.Write(page)
			},
			want: word.OK, wantChecked: true,
		},
		{
			name: "a real page with no chapter is no_chapter with its title",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Write(readFixture(t, "asurascans", "no-chapters.html"))
			},
			want: word.NoChapter, wantChecked: true,
			check: func(t *testing.T, r adapters.Result) {
				if r.Facts.Title != "A Title Coming Soon" {
					t.Errorf("title %q", r.Facts.Title)
				}
			},
		},
		{
			name:    "a 200 that is not the Series page is no_chapter",
			handler: func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html><body>maintenance</body></html>")) },
			want:    word.NoChapter, wantChecked: true,
		},
		{
			name:    "a 404 is not_found",
			handler: func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
			want:    word.NotFound, wantChecked: true,
		},
		{
			name:    "a 410 is not_found",
			handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) },
			want:    word.NotFound, wantChecked: true,
		},
		{
			name: "a 403 with cf-mitigated is refused and not checked",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("cf-mitigated", "challenge")
				w.WriteHeader(403)
				w.Write(readFixture(t, "challenge", "cloudflare.html"))
			},
			want: word.Refused,
		},
		{
			name:    "a plain 403 is errors and checked",
			handler: func(w http.ResponseWriter, r *http.Request) { http.Error(w, "forbidden", 403) },
			want:    word.Errors, wantChecked: true,
		},
		{
			name:    "a 503 is errors and checked",
			handler: func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 503) },
			want:    word.Errors, wantChecked: true,
		},
		{
			name:    "a challenge body with 200 is refused",
			handler: func(w http.ResponseWriter, r *http.Request) { w.Write(readFixture(t, "challenge", "cloudflare.html")) },
			want:    word.Refused,
		},
		{
			name: "a page that only carries Cloudflare's injected script is not a challenge",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(strings.Replace(string(page), "</body>",
					`<script src="/cdn-cgi/challenge-platform/scripts/jsd/main.js"></script></body>`, 1)))
			},
			want: word.OK, wantChecked: true,
		},
		{
			name: "a 429 is refused with its bounded Retry-After",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "120")
				w.WriteHeader(429)
			},
			want: word.Refused,
			check: func(t *testing.T, r adapters.Result) {
				if r.RetryAfter != 2*time.Minute {
					t.Errorf("RetryAfter %v", r.RetryAfter)
				}
			},
		},
		{
			name: "a 429 asking for a day rests an hour",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "86400")
				w.WriteHeader(429)
			},
			want: word.Refused,
			check: func(t *testing.T, r adapters.Result) {
				if r.RetryAfter != time.Hour {
					t.Errorf("RetryAfter %v", r.RetryAfter)
				}
			},
		},
		{
			name: "a slow server past the timeout is errors and not checked",
			handler: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			},
			want: word.Errors,
		},
		{
			name: "an endless body is errors, checked",
			handler: func(w http.ResponseWriter, r *http.Request) {
				chunk := []byte(strings.Repeat("<p>chapter</p>", 1024))
				for r.Context().Err() == nil {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			},
			want: word.Errors, wantChecked: true,
		},
		{
			name: "a redirect inside the Site is followed",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/comics/nano-machine" {
					http.Redirect(w, r, "/comics/nano-machine-7f873ca6", http.StatusMovedPermanently)
					return
				}
				w.Write(page)
			},
			want: word.OK, wantChecked: true,
		},
		{
			name: "an absolute redirect to the Site's real host stays on the rewrite",
			handler: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/comics/nano-machine" {
					http.Redirect(w, r, "https://asurascans.com/comics/nano-machine-7f873ca6", http.StatusFound)
					return
				}
				w.Write(page)
			},
			want: word.OK, wantChecked: true,
		},
		{
			name: "endless redirects are errors",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
			},
			want: word.Errors,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newSiteServer(t, tc.handler)
			r := readerFor(t, "asurascans", srv, func(o *ReaderOptions) {
				o.Timeout = 500 * time.Millisecond
				o.MaxBody = 256 << 10
			})
			got := r.Read(context.Background(), "asurascans", asuraSeries)
			if got.Outcome != tc.want {
				t.Fatalf("outcome %q (status %d, err %v), want %q", got.Outcome, got.Status, got.Err, tc.want)
			}
			if got.Checked != tc.wantChecked {
				t.Errorf("Checked = %v, want %v", got.Checked, tc.wantChecked)
			}
			if tc.want != word.OK && got.Err == nil {
				t.Error("a failed read carries no error")
			}
			if tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

func TestReadUnfetchableSendsNothing(t *testing.T) {
	tests := []struct {
		name, site, url string
	}{
		{"an address on another Site's host", "asurascans", "https://comix.to/title/k7yg7-x"},
		{"an http address", "asurascans", "http://asurascans.com/comics/nano-machine"},
		{"an unparseable address", "asurascans", "https://asurascans.com/%zz"},
		{"an empty address", "asurascans", ""},
		{"a lookalike host", "asurascans", "https://asurascans.com.evil.test/comics/nano-machine"},
		{"an address with user-info", "asurascans", "https://u:p@asurascans.com/comics/nano-machine"},
		{"an address that is not a Series page", "asurascans", "https://asurascans.com/about"},
		{"an unknown site", "mangadex", "https://mangadex.org/title/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {})
			got := readerFor(t, "asurascans", srv, nil).Read(context.Background(), tc.site, tc.url)
			if got.Outcome != word.Unfetchable || got.Checked {
				t.Fatalf("outcome %q checked %v (err %v), want unfetchable, unchecked", got.Outcome, got.Checked, got.Err)
			}
			if n := srv.hits.Load(); n != 0 {
				t.Errorf("%d requests left the machine", n)
			}
		})
	}
}

func TestGateRefusesRedirectsToNonPublicAddresses(t *testing.T) {
	for _, target := range []string{
		"http://127.0.0.1:%d/comics/nano-machine",
		"https://127.0.0.1/",
		"https://10.0.0.1/comics/nano-machine",
		"https://169.254.169.254/latest/meta-data/",
		"https://[::1]/",
		"https://localhost/",
		"https://asurascans.com.evil.test/",
		"https://user@asurascans.com/comics/nano-machine",
		"https://asurascans.com:8443/comics/nano-machine",
	} {
		t.Run("a redirect to "+target, func(t *testing.T) {
			victim := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {})
			vu, _ := url.Parse(victim.URL)
			loc := strings.Replace(target, "%d", vu.Port(), 1)
			srv := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, loc, http.StatusFound)
			})
			got := readerFor(t, "asurascans", srv, nil).Read(context.Background(), "asurascans", asuraSeries)
			if got.Outcome != word.Unfetchable {
				t.Fatalf("outcome %q (err %v), want unfetchable", got.Outcome, got.Err)
			}
			if victim.hits.Load() != 0 {
				t.Error("the redirect reached its target")
			}
		})
	}
}

func TestAPlainReadFollowsAtMostFiveRedirects(t *testing.T) {
	var srv *siteServer
	srv = newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+"/comics/nano-machine?hop="+strconv.Itoa(int(srv.hits.Load())), http.StatusFound)
	})
	got := readerFor(t, "asurascans", srv, nil).Read(context.Background(), "asurascans", asuraSeries)
	if got.Outcome != word.Errors || got.Checked {
		t.Fatalf("outcome %q checked %v (err %v), want errors", got.Outcome, got.Checked, got.Err)
	}
	if n := srv.hits.Load(); n != 1+maxRedirects {
		t.Errorf("%d requests, want the first and %d redirects", n, maxRedirects)
	}
}

func TestARedirectToTheRewrittenHostWithUserInfoIsRefused(t *testing.T) {
	var srv *siteServer
	srv = newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
		u, _ := url.Parse(srv.URL)
		u.User, u.Path = url.User("someone"), "/comics/nano-machine"
		http.Redirect(w, r, u.String(), http.StatusFound)
	})
	got := readerFor(t, "asurascans", srv, nil).Read(context.Background(), "asurascans", asuraSeries)
	if got.Outcome != word.Unfetchable || srv.hits.Load() != 1 {
		t.Fatalf("outcome %q after %d requests (err %v), want unfetchable after 1", got.Outcome, srv.hits.Load(), got.Err)
	}
}

func TestGateRefusesAHostResolvingToLoopback(t *testing.T) {
	// No rewrite for the Site: its real host is looked up, and the answer is loopback.
	resolve := func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	r := NewReader(ReaderOptions{Resolve: resolve, BrowserSites: word.BrowserSites{}, Timeout: time.Second})
	got := r.Read(context.Background(), "asurascans", asuraSeries)
	if got.Outcome != word.Unfetchable || got.Checked {
		t.Fatalf("outcome %q checked %v (err %v), want unfetchable", got.Outcome, got.Checked, got.Err)
	}
}

func TestGateDialerRefusesNonPublicAddresses(t *testing.T) {
	srv := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {})
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	g := newGateDialer(nil, nil, time.Second)
	for _, addr := range []string{
		"127.0.0.1:" + strconv.Itoa(port),
		"localhost:" + strconv.Itoa(port),
		"[::1]:" + strconv.Itoa(port),
		"10.0.0.1:443",
		"169.254.169.254:80",
		"0.0.0.0:" + strconv.Itoa(port),
	} {
		t.Run("dialling "+addr, func(t *testing.T) {
			c, err := g.DialContext(context.Background(), "tcp", addr)
			if err == nil {
				c.Close()
				t.Fatal("the gate dialled it")
			}
			if !errors.Is(err, ErrGate) {
				t.Fatalf("error %v is not a gate refusal", err)
			}
		})
	}
	if srv.hits.Load() != 0 {
		t.Error("a request reached the loopback server")
	}
}

func TestPublicAddr(t *testing.T) {
	tests := []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", false}, {"10.0.0.1", false}, {"172.16.5.4", false}, {"192.168.1.1", false},
		{"169.254.169.254", false}, {"0.0.0.0", false}, {"224.0.0.1", false}, {"100.64.0.1", false},
		{"255.255.255.255", false}, {"::1", false}, {"::", false}, {"fe80::1", false}, {"fc00::1", false},
		{"ff02::1", false}, {"::ffff:127.0.0.1", false}, {"64:ff9b::7f00:1", false}, {"2002:7f00:1::", false},
		// One address inside each listed non-public prefix.
		{"0.1.2.3", false}, {"192.0.0.8", false}, {"192.0.2.1", false}, {"198.18.0.1", false},
		{"198.51.100.1", false}, {"203.0.113.1", false}, {"240.0.0.1", false}, {"64:ff9b:1::1", false},
		{"100::1", false}, {"2001::1", false}, {"2001:db8::1", false}, {"fec0::1", false},
		{"8.8.8.8", true}, {"104.16.1.1", true}, {"2606:4700::6810:1", true},
	}
	for _, tc := range tests {
		if got := publicAddr(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("publicAddr(%s) = %v, want %v", tc.ip, got, tc.want)
		}
	}
}

func TestParseBaseURLs(t *testing.T) {
	got, err := ParseBaseURLs(" asurascans=http://127.0.0.1:9001, kagane=https://Mirror.Example:8443/ ")
	if err != nil {
		t.Fatal(err)
	}
	if got["asurascans"].String() != "http://127.0.0.1:9001" || got["kagane"].String() != "https://mirror.example:8443" {
		t.Errorf("got %v", got)
	}
	if m, err := ParseBaseURLs(""); err != nil || len(m) != 0 {
		t.Errorf("empty: %v, %v", m, err)
	}
	for _, bad := range []string{
		"asurascans", "mangadex=http://127.0.0.1:1", "asurascans=ftp://x", "asurascans=http://127.0.0.1/path",
		"asurascans=http://u:p@127.0.0.1", "asurascans=http://a,asurascans=http://b", "asurascans=127.0.0.1:9001",
	} {
		if _, err := ParseBaseURLs(bad); err == nil {
			t.Errorf("ParseBaseURLs(%q) accepted it", bad)
		}
	}
}

func TestParseBrowserSites(t *testing.T) {
	def, err := word.ParseBrowserSites("")
	if err != nil || len(def) != 2 || !def[word.Comix] || !def[word.Kagane] {
		t.Errorf("default = %v, %v", def, err)
	}
	none, err := word.ParseBrowserSites("none")
	if err != nil || len(none) != 0 {
		t.Errorf("none = %v, %v", none, err)
	}
	if _, err := word.ParseBrowserSites("comix,mangadex"); err == nil {
		t.Error("an unknown site was accepted")
	}
	r := NewReader(ReaderOptions{})
	if r.Route("comix") != word.RouteBrowser || r.Route("kagane") != word.RouteBrowser || r.Route("asurascans") != word.RoutePlain {
		t.Error("default routes are not comix,kagane on the browser")
	}
	if r.HasBrowser() {
		t.Error("HasBrowser without BROWSER_WS_URL")
	}
	if got := r.Read(context.Background(), "comix", "https://comix.to/title/k7yg7-x"); got.Outcome != word.Unreachable {
		t.Errorf("a browser Site without a sidecar read as %q", got.Outcome)
	}
}

func TestRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	h := http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}
	if got := retryAfter(h, now); got != 90*time.Second {
		t.Errorf("retryAfter(date) = %v", got)
	}
	h.Set("Retry-After", "soon")
	if got := retryAfter(h, now); got != 0 {
		t.Errorf("retryAfter(garbage) = %v", got)
	}
}

func TestSpacingKeepsRequestsToOneSiteApart(t *testing.T) {
	var arrivals []time.Time
	var mu sync.Mutex
	srv := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
		http.NotFound(w, r)
	})
	const spacing = 150 * time.Millisecond
	r := readerFor(t, "asurascans", srv, func(o *ReaderOptions) { o.Spacing = spacing })
	var calls []time.Time
	for range 3 {
		calls = append(calls, time.Now())
		if got := r.Read(context.Background(), "asurascans", asuraSeries); got.Outcome != word.NotFound {
			t.Fatalf("outcome %q", got.Outcome)
		}
	}
	// A request starts no earlier than its Read was called, and the next one
	// a full spacing after that start: so it arrives at least a spacing after
	// the previous Read was called, however late either reached the stand-in
	// (the first also dials; a loaded machine delays both).
	for i := 1; i < len(arrivals); i++ {
		if gap := arrivals[i].Sub(calls[i-1]); gap < spacing {
			t.Errorf("request %d arrived %v after read %d was called, want at least %v", i, gap, i-1, spacing)
		}
	}
	if len(arrivals) != 3 {
		t.Errorf("%d requests reached the stand-in, want 3", len(arrivals))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := r.Read(ctx, "asurascans", asuraSeries); got.Outcome != word.Errors {
		t.Errorf("a cancelled wait read as %q", got.Outcome)
	}
}

func TestNewReaderLogsEachRewriteAtStart(t *testing.T) {
	var buf strings.Builder
	bases, err := ParseBaseURLs("kagane=http://127.0.0.1:9004,asurascans=http://127.0.0.1:9001")
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(ReaderOptions{
		BaseURLs: bases, BrowserWSURL: "ws://127.0.0.1:1/devtools/browser/x",
		Logger: slog.New(slog.NewTextHandler(&buf, nil)),
	})
	out := buf.String()
	for _, want := range []string{"site=asurascans base_url=http://127.0.0.1:9001", "site=kagane base_url=http://127.0.0.1:9004"} {
		if !strings.Contains(out, want) {
			t.Errorf("start-up log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "devtools/browser/x") {
		t.Errorf("start-up log quotes the sidecar address:\n%s", out)
	}
	if !r.HasBrowser() || r.Route("kagane") != word.RouteBrowser {
		t.Error("a configured sidecar is not used for the default browser Sites")
	}
}
