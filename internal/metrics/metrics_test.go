package metrics_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mangabookmark/mangabookmark/internal/metrics"
	"github.com/mangabookmark/mangabookmark/word"
)

const token = "TOKENMARKER-0123456789abcdef"

// scrape asks h for /metrics with the headers given and parses a 200's body.
func scrape(t *testing.T, h http.Handler, headers ...string) (int, string, map[string]*dto.MetricFamily) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusOK {
		return rec.Code, string(body), nil
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("the scrape does not parse: %v\n%s", err, body)
	}
	return rec.Code, string(body), fams
}

// labels is one sample's labels as a map.
func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func TestMetricsAnswerOnlyTheBearerOfTheToken(t *testing.T) {
	t.Parallel()
	h := metrics.Handler(metrics.NewRegistry(), word.Secret(token))
	cases := []struct {
		name    string
		headers []string
		want    int
	}{
		{"no Authorization header", nil, http.StatusUnauthorized},
		{"a wrong token", []string{"Authorization", "Bearer " + token + "x"}, http.StatusUnauthorized},
		{"the token under another scheme", []string{"Authorization", "Basic " + token}, http.StatusUnauthorized},
		{"the token alone", []string{"Authorization", token}, http.StatusUnauthorized},
		{"the token as a bearer", []string{"Authorization", "Bearer " + token}, http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body, fams := scrape(t, h, c.headers...)
			if status != c.want {
				t.Fatalf("status %d, want %d", status, c.want)
			}
			if status == http.StatusOK && fams["go_goroutines"] == nil {
				t.Errorf("the scrape has no Go collector:\n%s", body)
			}
			if status != http.StatusOK && strings.TrimSpace(body) != "Unauthorized" {
				t.Errorf("a refusal says more than Unauthorized: %q", body)
			}
		})
	}
}

func TestMetricsWithoutATokenAnswerAnyone(t *testing.T) {
	t.Parallel()
	status, body, fams := scrape(t, metrics.Handler(metrics.NewRegistry(), ""))
	if status != http.StatusOK || fams["process_start_time_seconds"] == nil {
		t.Fatalf("status %d, want 200 with the process collector:\n%s", status, body)
	}
}

// A version never released, junk, or a method HTTP does not define is one
// label value, "other": no client can grow the label set.
func TestMetricsFoldWhatAClientSendsIntoKnownLabels(t *testing.T) {
	t.Parallel()
	reg := metrics.NewRegistry()
	m := metrics.NewHTTP(reg, []string{"1.0.0", "1.0.1"})
	for _, v := range []string{"1.0.1", "1.0.1", "9.9.9", "1.0.1<script>", strings.Repeat("1", 300), ""} {
		m.Userscript(v)
	}
	m.Request("/admin", "BREW", 418, time.Millisecond, 2)
	m.Request("/admin", http.MethodGet, 0, time.Millisecond, 2)
	_, body, fams := scrape(t, metrics.Handler(reg, ""))
	got := map[string]float64{}
	for _, s := range fams["mangabookmark_userscript_requests_total"].GetMetric() {
		got[labels(s)["version"]] = s.GetCounter().GetValue()
	}
	if len(got) != 2 || got["1.0.1"] != 2 || got["other"] != 4 {
		t.Errorf("userscript versions %v, want 1.0.1=2 and other=4", got)
	}
	var seen []string
	for _, s := range fams["mangabookmark_http_requests_total"].GetMetric() {
		l := labels(s)
		seen = append(seen, l["method"]+" "+l["status"])
	}
	if strings.Join(seen, ",") != "GET 200,other 418" {
		t.Errorf("requests by method and status %v, want GET 200 (a handler that wrote nothing) and other 418\n%s", seen, body)
	}
}

// The pool figures are pgxpool's own, read at the scrape, one set per pool.
func TestMetricsReadEachPoolAtTheScrape(t *testing.T) {
	t.Parallel()
	cfg, err := pgxpool.ParseConfig("postgres://nobody@127.0.0.1:1/none")
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 3
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg) // connects only when asked
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	reg := metrics.NewRegistry()
	reg.MustRegister(metrics.NewPools(map[string]metrics.Pool{"pages": pool}))
	_, body, fams := scrape(t, metrics.Handler(reg, ""))
	f := fams["mangabookmark_db_pool_max_connections"]
	if f == nil || len(f.GetMetric()) != 1 || labels(f.GetMetric()[0])["pool"] != "pages" || f.GetMetric()[0].GetGauge().GetValue() != 3 {
		t.Fatalf("no max_connections of 3 for pool pages:\n%s", body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := pool.Acquire(ctx); err == nil {
		t.Fatal("acquired on a cancelled context")
	}
	_, body, fams = scrape(t, metrics.Handler(reg, ""))
	if f := fams["mangabookmark_db_pool_acquires_total"]; f == nil || f.GetType() != dto.MetricType_COUNTER {
		t.Errorf("no acquires counter:\n%s", body)
	}
}
