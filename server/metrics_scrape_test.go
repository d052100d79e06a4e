package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/static"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// probeID is the Series the scrape test's pass reads: an id no label may
// ever carry.
const probeID = "probe-series-4711"

// novelfullStandIn serves the novelfull fixture as probeID's page (its
// latest chapter 2334), and 404 for anything else (its cover).
func novelfullStandIn(t *testing.T) *httptest.Server {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("..", "adapters", "testdata", "novelfull", "ongoing.html"))
	if err != nil {
		t.Fatal(err)
	}
	page = bytes.ReplaceAll(page, []byte("reverend-insanity"), []byte(probeID)) // the fixture's own id
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/"+probeID+".html" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// webhookSink is a Discord stand-in that takes every POST (204) and counts them.
func webhookSink(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	posts := &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		posts.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, posts
}

// seedScrape puts Ada's Bookmark at chapter 10 on probeID, due now on
// novelfull and read ten minutes ago, with a Discord announcement asked
// for; asurascans's one Series (not due) fails with no chapter for 13 h,
// so its pass opens and sends adapter-broken (seedAdapterBroken); comix
// has one in the failing filter. Returns
// Ada's userscript token, signed with tokenKey.
func seedScrape(t *testing.T, dbURL string, tokenKey []byte) string {
	t.Helper()
	seedAdapterBroken(t, dbURL, []string{"asurascans"})
	ctx := context.Background()
	st, err := store.Open(ctx, dbURL, store.Pools{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	storetest.Insert(t, st.Pool(), storetest.Reader{ID: "111", Name: "Ada"})
	storetest.Insert(t, st.Pool(), storetest.Series{Site: word.Novelfull, ID: probeID, URL: "https://novelfull.com/" + probeID + ".html",
		Kind: word.Novel, Title: "Probe", LatestChapter: "10", CheckedAt: now.Add(-10 * time.Minute), NextReadAt: now.Add(-time.Minute)})
	// comix (a browser Site, no sidecar: never read here) has one Series
	// failing for two days.
	storetest.Insert(t, st.Pool(), storetest.Series{Site: word.Comix, ID: "c1", URL: "https://comix.to/title/c1", LatestChapter: "5",
		CheckedAt: now.Add(-time.Hour), NextReadAt: now.Add(time.Hour)})
	storetest.Insert(t, st.Pool(), storetest.Failure{Site: word.Comix, Series: "c1", Outcome: word.Errors, FailingSince: now.Add(-48 * time.Hour)})
	storetest.Insert(t, st.Pool(), storetest.Bookmark{Reader: "111", Site: word.Novelfull, Series: probeID, Progress: "10"})
	storetest.Insert(t, st.Pool(), storetest.ReaderSettings{Reader: "111", Discord: true})
	tok, hash := handlers.NewAPIToken(tokenKey)
	if _, err := st.CreateToken(ctx, "111", hash, "", time.Time{}); err != nil {
		t.Fatal(err)
	}
	return tok
}

// scrapeAll reads /metrics with the bearer token and parses it; the body
// comes back too, for a failure's message.
func scrapeAll(t *testing.T, base, token string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	status, b := askMetrics(t, base+"/metrics", token)
	if status != http.StatusOK {
		t.Fatalf("GET /metrics with the token: %d %s", status, b)
	}
	return parseScrape(t, b), string(b)
}

// find is family's first sample whose labels include want (name, value
// pairs), or nil.
func find(fams map[string]*dto.MetricFamily, family string, want ...string) *dto.Metric {
	for _, m := range fams[family].GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		ok := true
		for i := 0; i+1 < len(want); i += 2 {
			ok = ok && have[want[i]] == want[i+1]
		}
		if ok {
			return m
		}
	}
	return nil
}

// figure is a sample's counter or gauge value, or its histogram's count;
// 0 for no sample.
func figure(m *dto.Metric) float64 {
	switch {
	case m == nil:
		return 0
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

// readmeFamilies is every family name the README's Metrics tables list,
// `_idle_connections` and its kind read after mangabookmark_db_pool.
func readmeFamilies(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Metrics\n")
	if !ok {
		t.Fatal("the README has no Metrics section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	names := regexp.MustCompile("`(mangabookmark_[a-z_]+|_[a-z_]+)")
	var out []string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `mangabookmark_") {
			continue
		}
		for _, m := range names.FindAllStringSubmatch(line, -1) {
			if strings.HasPrefix(m[1], "_") {
				m[1] = "mangabookmark_db_pool" + m[1]
			}
			out = append(out, m[1])
		}
	}
	return out
}

// TestMetricsScrapedAfterAPassShowEveryFamily is issue 25's "done when" for
// /metrics: the real server, METRICS_TOKEN set, one novelfull pass against
// a stand-in Site finding a new chapter (announced, and an owner notice
// sent, to a local sink), a userscript request and a page;
// then one scrape over HTTP holds a sample of every family the README
// lists, and no label names the Series or an address.
func TestMetricsScrapedAfterAPassShowEveryFamily(t *testing.T) {
	t.Parallel()
	const token = "scrape-test-metrics-token-0123456789"
	tokenKey := []byte("scrape-test-token-key-0123456789abcdef")
	site := novelfullStandIn(t)
	hook, posts := webhookSink(t)
	dbURL := storetest.URL(t)
	apiToken := seedScrape(t, dbURL, tokenKey)
	addr := freeAddr(t)
	env := map[string]string{"DATABASE_URL": dbURL, "DATA_DIR": t.TempDir(), "LISTEN_ADDR": addr,
		"METRICS_TOKEN": token, "TOKEN_KEY": string(tokenKey), "POLL_SPACING": "0s",
		"LISTING_EVERY":  "0", // no listing: nothing leaves this machine
		"SITE_BASE_URLS": "novelfull=" + site.URL, "DISCORD_WEBHOOK_URL": hook.URL + "/api/webhooks/1/owner",
		"READERS_WEBHOOK_URL": hook.URL + "/api/webhooks/2/readers"}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, func(k string) string { return env[k] }, &stdout, &stderr) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	base := "http://" + addr
	waitHealthy(t, base, done)

	// The Lanes pass at their start: wait (bounded) until novelfull's pass,
	// Ada's announcement of chapter 2334 and asurascans's adapter-broken
	// notice are counted.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		fams, _ := scrapeAll(t, base, token)
		if figure(find(fams, "mangabookmark_passes_total", "site", "novelfull", "skip", "none")) >= 1 &&
			figure(find(fams, "mangabookmark_notice_sends_total", "result", "sent")) >= 1 &&
			figure(find(fams, "mangabookmark_announcement_sends_total", "channel", "discord", "result", "sent")) >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s no novelfull pass, notice and announcement counted (%d webhook posts):\n%s", posts.Load(), stderr.String())
		}
	}
	// A page whose path holds the Series id, and the userscript's request.
	getOK(t, signInWithLink(t, &stdout), base+"/admin/series/novelfull/"+probeID)
	getOK(t, http.DefaultClient, base+"/api/v1/me",
		"Authorization", "Bearer "+apiToken, "X-Userscript-Version", static.UserscriptVersions()[0])

	fams, body := scrapeAll(t, base, token)
	checkEveryFamily(t, fams, body)
	checkBoundedLabels(t, fams, probeID, strings.TrimPrefix(site.URL, "http://"), strings.TrimPrefix(hook.URL, "http://"), apiToken)
}

// getOK asks url with headers (name, value pairs); anything but 200 fails.
func getOK(t *testing.T, c *http.Client, url string, headers ...string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
}

// familyCheck is one README family's sample: labels it must carry and the
// least figure it must show (a counter's or gauge's value, a histogram's
// count).
type familyCheck struct {
	labels []string
	least  float64
}

// scrapeChecks are the samples the scrape test's pass and requests make:
// one per family the README lists, and for the pools' families each pool.
func scrapeChecks() map[string][]familyCheck {
	page := []string{"route", "/admin/series/{site}/{id}", "method", "GET"}
	pools := []familyCheck{{[]string{"pool", "pages"}, 0}, {[]string{"pool", "lanes"}, 0}}
	checks := map[string][]familyCheck{
		"mangabookmark_http_requests_total":           {{append(page, "status", "200"), 1}, {[]string{"route", "/api/v1/me", "status", "200"}, 1}},
		"mangabookmark_http_request_duration_seconds": {{page, 1}},
		"mangabookmark_http_request_statements":       {{page, 1}},
		"mangabookmark_userscript_requests_total":     {{[]string{"version", static.UserscriptVersions()[0]}, 1}},
		"mangabookmark_passes_total":                  {{[]string{"site", "novelfull", "skip", "none"}, 1}},
		"mangabookmark_polls_total":                   {{[]string{"site", "novelfull", "outcome", "ok"}, 1}},
		// 10 → 2334: one new chapter, detected at this read.
		"mangabookmark_detection_delay_seconds":  {{[]string{"site", "novelfull"}, 1}},
		"mangabookmark_notice_sends_total":       {{[]string{"result", "sent"}, 1}},
		"mangabookmark_announcement_sends_total": {{[]string{"channel", "discord", "result", "sent"}, 1}},
		"mangabookmark_series_due":               {{[]string{"site", "novelfull"}, 1}},
		"mangabookmark_oldest_read_age_seconds":  {{[]string{"site", "asurascans"}, 0}},
		"mangabookmark_oldest_check_age_seconds": {{[]string{"site", "asurascans"}, 0}},
		"mangabookmark_series_never_read":        {{[]string{"site", "asurascans"}, 0}},
		"mangabookmark_series_failing":           {{[]string{"site", "comix"}, 1}},
		"mangabookmark_owner_notices_open":       {{[]string{"kind", "adapter-broken"}, 1}},
		"mangabookmark_scrape_errors_total":      {{nil, 0}},
	}
	for _, name := range []string{"acquired_connections", "idle_connections", "constructing_connections", "total_connections",
		"acquires_total", "acquire_seconds_total", "canceled_acquires_total", "empty_acquires_total",
		"empty_acquire_wait_seconds_total", "new_connections_total", "max_lifetime_destroys_total", "max_idle_destroys_total"} {
		checks["mangabookmark_db_pool_"+name] = pools
	}
	checks["mangabookmark_db_pool_max_connections"] = []familyCheck{{[]string{"pool", "pages"}, 1}, {[]string{"pool", "lanes"}, 1}}
	return checks
}

// checkEveryFamily: each family the README lists has a check here and a
// sample in the scrape that passes it.
func checkEveryFamily(t *testing.T, fams map[string]*dto.MetricFamily, body string) {
	t.Helper()
	checks := scrapeChecks()
	listed := readmeFamilies(t)
	for _, name := range listed {
		if _, ok := checks[name]; !ok {
			t.Errorf("the README lists %s; this test has no sample to check for it", name)
		}
	}
	for name := range checks {
		if !slices.Contains(listed, name) {
			t.Errorf("the test checks %s, which the README's Metrics section does not list", name)
		}
	}
	for name, cs := range checks {
		if fams[name] == nil {
			t.Errorf("the scrape has no family %s", name)
			continue
		}
		for _, c := range cs {
			m := find(fams, name, c.labels...)
			if m == nil {
				t.Errorf("%s has no sample labelled %v", name, c.labels)
			} else if figure(m) < c.least {
				t.Errorf("%s%v is %v, want at least %v", name, c.labels, figure(m), c.least)
			}
		}
	}
	if m := find(fams, "mangabookmark_scrape_errors_total"); m != nil && figure(m) != 0 {
		t.Errorf("mangabookmark_scrape_errors_total is %v: a scrape's database read failed", figure(m))
	}
	if t.Failed() {
		t.Logf("the scrape:\n%s", ourLines(body))
	}
}

// ourLines is the scrape's mangabookmark_ lines, for a failure's message.
func ourLines(body string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "mangabookmark_") && !strings.Contains(l, "_bucket{") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// checkBoundedLabels: no label value of any family carries one of leaks
// (the Series id, an address, a token).
func checkBoundedLabels(t *testing.T, fams map[string]*dto.MetricFamily, leaks ...string) {
	t.Helper()
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				for _, leak := range leaks {
					if strings.Contains(l.GetValue(), leak) {
						t.Errorf("%s: label %s=%q carries %q", name, l.GetName(), l.GetValue(), leak)
					}
				}
			}
		}
	}
}
