package handlers_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/internal/metrics"
	"github.com/mangabookmark/mangabookmark/static"
	"github.com/mangabookmark/mangabookmark/word"
)

const metricsToken = "METRICSMARKER-0123456789abcdef"

// withMetrics serves /metrics on the harness's router behind metricsToken,
// as the server does with METRICS_TOKEN set and METRICS_ADDR unset: its
// requests, its userscript versions and its pool.
func withMetrics(d *handlers.Deps) {
	reg := metrics.NewRegistry()
	d.Metrics = metrics.NewHTTP(reg, static.UserscriptVersions())
	reg.MustRegister(metrics.NewPools(map[string]metrics.Pool{"pages": d.Store.Pool()}))
	d.MetricsHandler = metrics.Handler(reg, word.Secret(metricsToken))
}

// scrapeMetrics reads /metrics with the token and parses it.
func (h *harness) scrapeMetrics() (string, map[string]*dto.MetricFamily) {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.srv.URL+"/metrics", nil)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+metricsToken)
	resp, err := anonymous().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("the scrape answered %d: %s", resp.StatusCode, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		h.t.Fatalf("the scrape does not parse: %v", err)
	}
	return string(b), fams
}

// ourLines is the scrape's samples of our own families, for a failure's message.
func ourLines(body string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "mangabookmark_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// sample is the first sample of family whose labels include want.
func sample(fams map[string]*dto.MetricFamily, family string, want map[string]string) *dto.Metric {
	for _, m := range fams[family].GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		ok := true
		for k, v := range want {
			ok = ok && have[k] == v
		}
		if ok {
			return m
		}
	}
	return nil
}

func TestMetricsAnswerOnlyTheBearerOfMetricsToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withMetrics)
	owner := h.owner() // a signed-in owner is no scraper
	for _, c := range []struct {
		name    string
		client  *http.Client
		headers []string
		want    int
	}{
		{"no token", anonymous(), nil, http.StatusUnauthorized},
		{"the owner's session and no token", owner, nil, http.StatusUnauthorized},
		{"a wrong token", anonymous(), []string{"Authorization", "Bearer not-" + metricsToken}, http.StatusUnauthorized},
		{"the token", anonymous(), []string{"Authorization", "Bearer " + metricsToken}, http.StatusOK},
	} {
		a := h.get(c.client, "/metrics", c.headers...)
		if a.status != c.want {
			t.Errorf("%s: %d, want %d", c.name, a.status, c.want)
		}
		if a.status == http.StatusUnauthorized && strings.Contains(a.body, "mangabookmark_") {
			t.Errorf("%s: a refusal carried metrics", c.name)
		}
	}
	if strings.Contains(h.logs.String(), metricsToken) {
		t.Error("the token reached the log")
	}
}

// Neither METRICS_TOKEN nor METRICS_ADDR, or METRICS_ADDR alone (the
// requests still counted, and served on that listener only): /metrics is
// an unknown path here, token or not.
func TestMetricsAreAnUnknownPathWhereNotServed(t *testing.T) {
	t.Parallel()
	elsewhere := func(d *handlers.Deps) { withMetrics(d); d.MetricsHandler = nil }
	for name, h := range map[string]*harness{"off": newHarness(t), "on METRICS_ADDR": newHarness(t, elsewhere)} {
		for _, c := range []*http.Client{anonymous(), h.owner()} {
			if a := h.get(c, "/metrics", "Authorization", "Bearer "+metricsToken); a.status != http.StatusNotFound {
				t.Errorf("%s: /metrics answered %d, want 404", name, a.status)
			}
		}
	}
}

// After a few requests the scrape counts them by route pattern and status,
// with the statements each sent, never naming a path or a Series id; the
// pool's figures are there, and the userscript's version (a junk one as
// "other").
func TestMetricsCountRequestsByRoutePatternNeverByPath(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withMetrics)
	h.seed(dataset)
	owner := h.owner()
	for range 2 {
		if a := h.get(owner, "/admin/series/asurascans/failing-3mo"); a.status != http.StatusOK {
			t.Fatalf("the detail page answered %d", a.status)
		}
	}
	h.get(anonymous(), "/no-such-page/secret-path-segment")
	tok := h.apiToken("r1", "")
	released := static.UserscriptVersions()[0]
	h.api("GET", "/api/v1/me", tok, "", "X-Userscript-Version", released)
	h.api("GET", "/api/v1/me", tok, "", "X-Userscript-Version", "junk-version-label")
	body, fams := h.scrapeMetrics()
	ours := ourLines(body)

	detail := map[string]string{"route": "/admin/series/{site}/{id}", "method": "GET"}
	if s := sample(fams, "mangabookmark_http_requests_total", map[string]string{"route": detail["route"], "method": "GET", "status": "200"}); s.GetCounter().GetValue() != 2 {
		t.Errorf("the detail page counted %v times under its pattern, want 2\n%s", s.GetCounter().GetValue(), ours)
	}
	if s := sample(fams, "mangabookmark_http_requests_total", map[string]string{"route": "unmatched", "status": "404"}); s.GetCounter().GetValue() != 1 {
		t.Errorf("the unknown path was not counted once as unmatched\n%s", ours)
	}
	if s := sample(fams, "mangabookmark_http_request_duration_seconds", detail); s.GetHistogram().GetSampleCount() != 2 {
		t.Errorf("the detail page's durations hold %d samples, want 2", s.GetHistogram().GetSampleCount())
	}
	// The session, the Series, its Bookmark count…: the page's own few
	// statements (TestEveryAdminPageRunsAFixedFewStatements), as the log
	// line says them.
	if s := sample(fams, "mangabookmark_http_request_statements", detail); s.GetHistogram().GetSampleCount() != 2 || s.GetHistogram().GetSampleSum() < 2 {
		t.Errorf("statements per request for the detail page: %v samples summing %v, want 2 samples of at least one statement each",
			s.GetHistogram().GetSampleCount(), s.GetHistogram().GetSampleSum())
	}
	for _, leak := range []string{"failing-3mo", "secret-path-segment", "junk-version-label", "/admin/series/asurascans", tok} {
		if strings.Contains(body, leak) {
			t.Errorf("the scrape names %q", leak)
		}
	}
	if s := sample(fams, "mangabookmark_db_pool_max_connections", map[string]string{"pool": "pages"}); s.GetGauge().GetValue() < 1 {
		t.Errorf("no pool size for the pages pool\n%s", ours)
	}
	if s := sample(fams, "mangabookmark_db_pool_acquires_total", map[string]string{"pool": "pages"}); s.GetCounter().GetValue() < 2 {
		t.Errorf("the pages pool counted %v acquires after the pages", s.GetCounter().GetValue())
	}
	for v, want := range map[string]float64{released: 1, metrics.Other: 1} {
		if s := sample(fams, "mangabookmark_userscript_requests_total", map[string]string{"version": v}); s.GetCounter().GetValue() != want {
			t.Errorf("userscript version %s counted %v times, want %v", v, s.GetCounter().GetValue(), want)
		}
	}
}
