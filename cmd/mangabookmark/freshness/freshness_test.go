package freshness

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// small is a few thousand Series over three simulated days: enough for
// every strategy to read, walk and learn, in well under a second.
func small() Config {
	return Config{
		N: 6000, Horizon: 72 * time.Hour, Warmup: 12 * time.Hour, Seed: 7,
		Spacing: 3 * time.Second, ListingEvery: 5 * time.Minute,
		Backstop: 7 * day, Floor: time.Hour, K: 30, Bookmarked: 0.9,
	}
}

func TestNoSiteEverGetsTwoRequestsCloserThanTheSpacing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  func(Config) Config
	}{
		{"at the defaults", func(c Config) Config { return c }},
		{"under a burst of listed Series", func(c Config) Config {
			// About 28 releases a Site between two walks two hours apart,
			// five rows a page: every walk runs to the page cap and queues
			// a burst of Listed reads.
			c.N, c.K, c.ListingEvery = 60000, 5, 2*time.Hour
			return c
		}},
		{"with the listing off", func(c Config) Config { c.ListingEvery = 0; return c }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := tc.cfg(small())
			st := newSite(cfg, cfg.N/Sites, rand.New(rand.NewPCG(cfg.Seed, 0)))
			for _, s := range strategies {
				l := s.run(cfg, st)
				log := l.requests
				t.Logf("%s: %d requests, %d listing pages, reads %v", s.name, len(log), l.pages, l.reads)
				if len(log) < 100 {
					t.Fatalf("%s made %d requests: too few to hold the rule to", s.name, len(log))
				}
				for i := 1; i < len(log); i++ {
					if gap := log[i] - log[i-1]; gap < cfg.Spacing {
						t.Fatalf("%s: requests %d and %d are %s apart, under the spacing %s", s.name, i-1, i, gap, cfg.Spacing)
					}
				}
				if most, cap := maxPerHour(log), int(time.Hour/cfg.Spacing); most > cap {
					t.Fatalf("%s: %d requests in an hour, over %d", s.name, most, cap)
				}
			}
		})
	}
}

func TestTheSameSeedGivesTheSameReportAndAnotherSeedAnother(t *testing.T) {
	t.Parallel()
	cfg := small()
	a, b := Simulate(context.Background(), cfg), Simulate(context.Background(), cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("one seed, two reports:\n%+v\n%+v", a, b)
	}
	cfg.Seed++
	if c := Simulate(context.Background(), cfg); reflect.DeepEqual(a.Strategies, c.Strategies) {
		t.Fatalf("seeds %d and %d gave the same report: the seed reaches nothing", cfg.Seed-1, cfg.Seed)
	}
}

func TestTheSchedulerFindsChaptersSoonerThanTheRoundRobin(t *testing.T) {
	t.Parallel()
	cfg := small()
	cfg.N = 30000 // 5,000 a Site: the round-robin comes back every four hours
	rep := Simulate(context.Background(), cfg)
	rr, sc := rep.Strategies[0], rep.Strategies[1]
	if rr.Name != "round_robin" || sc.Name != "scheduled" {
		t.Fatalf("strategies %s, %s", rr.Name, sc.Name)
	}
	if rr.Chapters < 100 || sc.Chapters != rr.Chapters {
		t.Fatalf("chapters measured: round-robin %d, scheduled %d", rr.Chapters, sc.Chapters)
	}
	if sc.P50 >= rr.P50 || sc.P99 >= rr.P99 {
		t.Fatalf("scheduled p50 %s p99 %s, round-robin p50 %s p99 %s", sc.P50, sc.P99, rr.P50, rr.P99)
	}
	// Walked every five minutes, the listing names a chapter within one
	// walk, and the Listed read follows within seconds.
	if sc.P99 > cfg.ListingEvery+time.Minute {
		t.Fatalf("scheduled p99 %s, over one listing interval", sc.P99)
	}
	if sc.Reads["listed"] == 0 || sc.ListingPages == 0 {
		t.Fatalf("scheduled read no listing or no Listed Series: %+v, %d pages", sc.Reads, sc.ListingPages)
	}
}

func TestTheJSONIsOneObjectWithTheIssuesKeys(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), []string{"-n", "600", "-hours", "30", "-warmup", "6", "-json"}, nil, &out, &errOut, func(string) string { return "" })
	if err != nil {
		t.Fatalf("run: %v (%s)", err, errOut.String())
	}
	dec := json.NewDecoder(&out)
	var got struct {
		N          int                                   `json:"n"`
		Sites      int                                   `json:"sites"`
		SpacingS   float64                               `json:"spacing_s"`
		Strategies map[string]map[string]json.RawMessage `json:"strategies"`
	}
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if dec.More() {
		t.Fatal("more than one JSON value")
	}
	if got.N != 600 || got.Sites != 6 || got.SpacingS != 3 {
		t.Fatalf("n %d sites %d spacing_s %v", got.N, got.Sites, got.SpacingS)
	}
	keys := []string{"p50_delay_s", "p95_delay_s", "p99_delay_s", "max_requests_per_hour_per_site", "backstop_max_age_s"}
	for _, name := range []string{"round_robin", "scheduled"} {
		s, ok := got.Strategies[name]
		if !ok {
			t.Fatalf("no strategy %s in %v", name, got.Strategies)
		}
		for _, k := range keys {
			var v float64
			if err := json.Unmarshal(s[k], &v); err != nil || v <= 0 {
				t.Fatalf("%s.%s = %s: want a positive number", name, k, s[k])
			}
		}
	}
	if len(got.Strategies) != 2 {
		t.Fatalf("strategies %v", got.Strategies)
	}
}

func TestTheTableNamesTheSeedAndTheMix(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"-n", "600", "-hours", "30", "-warmup", "6", "-seed", "42"}, nil, &out, &out, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"seed 42", "70% dormant", "| round_robin |", "| scheduled |"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("table lacks %q:\n%s", want, out.String())
		}
	}
}
