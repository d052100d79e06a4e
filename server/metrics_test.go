package server

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// TestARegistryGetsTheLanesPassesAndThePagesFigures: a server given a
// Registry counts its Lanes' passes into it and exposes the gauges the
// pages show (issue 25, item 5); Serve wires the Domain, nothing else.
func TestARegistryGetsTheLanesPassesAndThePagesFigures(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(func(k string) string {
		return map[string]string{"DATABASE_URL": storetest.URL(t), "DATA_DIR": t.TempDir(), "LISTEN_ADDR": freeAddr(t),
			"POLL_SPACING": "0s", "LISTING_EVERY": "0"}[k] // no listing: nothing leaves this machine
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, cfg, &stdout, &stderr, Options{Registry: reg}) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	waitHealthy(t, "http://"+cfg.ListenAddr, done)
	// Every Lane passes at its start: comix, a browser Site with no
	// sidecar, skips as no-browser; novelfull has nothing due and runs.
	want := map[[2]string]bool{{"comix", "no-browser"}: true, {"novelfull", "none"}: true}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		fams, err := reg.Gather()
		if err != nil {
			t.Fatalf("the scrape failed: %v", err)
		}
		seen, failing := 0, 0
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				l := map[string]string{}
				for _, p := range m.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				switch f.GetName() {
				case "mangabookmark_passes_total":
					if want[[2]string{l["site"], l["skip"]}] && m.GetCounter().GetValue() >= 1 {
						seen++
					}
				case "mangabookmark_series_failing":
					failing++
				}
			}
		}
		if seen == len(want) && failing == 6 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s: %d of the passes %v counted, %d failing gauges:\n%s", seen, want, failing, stderr.String())
		}
	}
}
