package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// askMetrics asks url with the bearer token when one is given, and returns
// the status and the body.
func askMetrics(t *testing.T, url, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// parseScrape parses a /metrics body in the text format.
func parseScrape(t *testing.T, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("/metrics does not parse as the text format: %v", err)
	}
	return fams
}

// scrapeStatus asks url with the bearer token when one is given; a 200 from
// /metrics must parse as a scrape holding both pools' sizes.
func scrapeStatus(t *testing.T, url, token string) int {
	t.Helper()
	status, b := askMetrics(t, url, token)
	if status == http.StatusOK && strings.HasSuffix(url, "/metrics") {
		pools := map[string]bool{}
		for _, m := range parseScrape(t, b)["mangabookmark_db_pool_max_connections"].GetMetric() {
			for _, l := range m.GetLabel() {
				pools[l.GetName()+"="+l.GetValue()] = true
			}
		}
		if !pools["pool=pages"] || !pools["pool=lanes"] {
			t.Errorf("%s: pool sizes for %v, want pages and lanes", url, pools)
		}
	}
	return status
}

// Each way of serving /metrics, through the real start: where it answers,
// with and without the token, where it is an unknown path, and the one log
// line saying where it is, never with the token.
func TestMetricsAreServedWhereTheSettingsSay(t *testing.T) {
	t.Parallel()
	const token = marker + "-metrics-token"
	cases := []struct {
		name         string
		token        bool
		ownAddr      bool
		mainWithout  int // the main listener's /metrics without a token
		mainWith     int // and with it
		ownWithout   int // METRICS_ADDR's /metrics without a token
		ownWith      int
		ownOtherPath int // METRICS_ADDR's /healthz
	}{
		{name: "off", mainWithout: 404, mainWith: 404},
		{name: "METRICS_TOKEN alone", token: true, mainWithout: 401, mainWith: 200},
		{name: "METRICS_ADDR alone", ownAddr: true, mainWithout: 404, mainWith: 404, ownWithout: 200, ownWith: 200, ownOtherPath: 404},
		{name: "both", token: true, ownAddr: true, mainWithout: 404, mainWith: 404, ownWithout: 401, ownWith: 200, ownOtherPath: 404},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			addr, maddr := freeAddr(t), freeAddr(t)
			env := map[string]string{"DATABASE_URL": storetest.URL(t), "DATA_DIR": t.TempDir(), "LISTEN_ADDR": addr}
			if c.token {
				env["METRICS_TOKEN"] = token
			}
			if c.ownAddr {
				env["METRICS_ADDR"] = maddr
			}
			ctx, cancel := context.WithCancel(context.Background())
			var stdout, stderr syncBuffer
			done := make(chan error, 1)
			go func() { done <- Run(ctx, func(k string) string { return env[k] }, &stdout, &stderr) }()
			base := "http://" + addr
			waitHealthy(t, base, done)
			if got := scrapeStatus(t, base+"/metrics", ""); got != c.mainWithout {
				t.Errorf("main listener without the token: %d, want %d", got, c.mainWithout)
			}
			if got := scrapeStatus(t, base+"/metrics", token); got != c.mainWith {
				t.Errorf("main listener with the token: %d, want %d", got, c.mainWith)
			}
			if c.ownAddr {
				own := "http://" + maddr
				if got := scrapeStatus(t, own+"/metrics", ""); got != c.ownWithout {
					t.Errorf("METRICS_ADDR without the token: %d, want %d", got, c.ownWithout)
				}
				if got := scrapeStatus(t, own+"/metrics", token); got != c.ownWith {
					t.Errorf("METRICS_ADDR with the token: %d, want %d", got, c.ownWith)
				}
				if got := scrapeStatus(t, own+"/healthz", ""); got != c.ownOtherPath {
					t.Errorf("METRICS_ADDR's /healthz: %d, want %d", got, c.ownOtherPath)
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("run: %v", err)
			}
			logs := stderr.String()
			if strings.Contains(logs+stdout.String(), marker) {
				t.Errorf("the token reached the output:\n%s", logs)
			}
			served := strings.Count(logs, "msg=\"metrics served\"")
			if want := map[bool]int{true: 1, false: 0}[c.token || c.ownAddr]; served != want {
				t.Errorf("%d lines say where metrics are served, want %d:\n%s", served, want, logs)
			}
			if c.ownAddr && !strings.Contains(logs, "at=http://"+maddr+"/metrics") {
				t.Errorf("the line does not name METRICS_ADDR:\n%s", logs)
			}
		})
	}
}

// A bad METRICS_ADDR or METRICS_TOKEN stops the start naming the variable,
// never quoting the token.
func TestMetricsSettingsAreCheckedAtStart(t *testing.T) {
	t.Parallel()
	for name, env := range map[string]map[string]string{
		"a short token":                 {"METRICS_TOKEN": marker[:8]},
		"a token with a space":          {"METRICS_TOKEN": marker + " 0123456789abcdef"},
		"an address without a port":     {"METRICS_ADDR": "localhost"},
		"the address of the main pages": {"METRICS_ADDR": "127.0.0.1:8080", "LISTEN_ADDR": "127.0.0.1:8080"},
	} {
		_, err := LoadConfig(func(k string) string { return env[k] })
		want := "METRICS_ADDR:"
		if _, ok := env["METRICS_TOKEN"]; ok {
			want = "METRICS_TOKEN:"
		}
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), marker[:8]) {
			t.Errorf("%s: %v, want one line naming %s without the token", name, err, want)
		}
	}
	cfg, err := LoadConfig(func(k string) string {
		return map[string]string{"METRICS_TOKEN": marker + "-0123456789", "METRICS_ADDR": "127.0.0.1:9090"}[k]
	})
	if err != nil || !cfg.MetricsOn() || cfg.MetricsAddr != "127.0.0.1:9090" || cfg.MetricsToken.Reveal() != marker+"-0123456789" {
		t.Errorf("good settings: %v %+v", err, cfg)
	}
}

// A busy METRICS_ADDR stops the start as a busy LISTEN_ADDR does, before
// the database is asked (this one does not answer), naming the variable.
func TestMetricsAddrInUseStopsTheStart(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	env := map[string]string{"DATABASE_URL": "postgres://nobody@127.0.0.1:1/none?connect_timeout=1", "DATA_DIR": t.TempDir(),
		"LISTEN_ADDR": freeAddr(t), "METRICS_ADDR": busy.Addr().String()}
	err = Run(context.Background(), func(k string) string { return env[k] }, io.Discard, io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "METRICS_ADDR: cannot listen on "+busy.Addr().String()) {
		t.Fatalf("the start answered %v, want METRICS_ADDR named as busy", err)
	}
}
