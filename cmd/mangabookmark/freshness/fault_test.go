package freshness

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// oneSite is the first Site of cfg's world, as Simulate draws it.
func oneSite(cfg Config) *site {
	return newSite(cfg, cfg.N/Sites, rand.New(rand.NewPCG(cfg.Seed, 0)))
}

func quantiles(d []time.Duration) [3]time.Duration {
	d = slices.Sorted(slices.Values(d))
	return [3]time.Duration{percentile(d, 0.50), percentile(d, 0.95), percentile(d, 0.99)}
}

func TestAListingThatOmitsNothingIsTheSimulatorBeforeItsFaults(t *testing.T) {
	t.Parallel()
	// The scheduled Lane's figures for small(), printed by this simulator
	// before the listing could omit a row or go down: a listing that
	// omits nothing and never goes down must leave every one of them.
	want := Result{Name: "scheduled", Chapters: 468, Undetected: 1,
		P50: 148322801720, P95: 290546208829, P99: 301724703674, MaxPerHour: 1013,
		BackstopMaxAge: 259176000000000, UpgradeMaxAge: 259176000000000, OldestAtEnd: 259176000000000,
		Reads:        map[string]int{"ahead": 384222, "due": 6026, "listed": 553},
		ListingPages: 5184, CadenceReads: 30, FoundUnlisted: 15,
		RequestsPerSite: []int{65023, 67579, 65455, 66240, 65455, 66233}}
	cfg := small()
	cfg.ListingLoss, cfg.ListingDown = 0, 0
	rep := Simulate(context.Background(), cfg)
	if len(rep.Strategies) != 2 {
		t.Fatalf("%d strategies without a fault, want round_robin and scheduled only", len(rep.Strategies))
	}
	if got := rep.Strategies[1]; !reflect.DeepEqual(got, want) {
		t.Fatalf("a healthy listing moved the figures:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestAListingThatOmitsEveryRowCostsWhatNoListingDoes(t *testing.T) {
	t.Parallel()
	cfg := small()
	cfg.N = 30000 // 5,000 a Site: without the listing, the delay is hours
	st := oneSite(cfg)
	lost, off := cfg, cfg
	lost.ListingLoss, off.ListingEvery = 1, 0
	healthy := quantiles(scheduled(cfg, st).delays)
	got, none := quantiles(scheduled(lost, st).delays), quantiles(scheduled(off, st).delays)
	t.Logf("p50/p95/p99: healthy %v, every row omitted %v, no listing %v", healthy, got, none)
	// Pages that name nothing make a broken listing after twelve hours
	// (the warm-up here): from then the Lane reads as with no listing,
	// but for one page an hour, which moves a read a slot or two. So the
	// figures agree within 5%, not to the second.
	for i, name := range []string{"p50", "p95", "p99"} {
		if diff := (got[i] - none[i]).Abs(); diff > none[i]/20 {
			t.Errorf("%s: every row omitted %v, no listing %v: %v apart", name, got[i], none[i], diff)
		}
		if got[i] < 10*healthy[i] {
			t.Errorf("%s: every row omitted %v, within ten times the healthy listing's %v: the loss reached nothing", name, got[i], healthy[i])
		}
	}
}

func TestAListingOutageRaisesTheDelayOfTheReleasesInItOnly(t *testing.T) {
	t.Parallel()
	for _, as := range []outageKind{unreachable, empty} {
		t.Run(string(as), func(t *testing.T) {
			t.Parallel()
			cfg := small()
			cfg.N = 30000
			st := oneSite(cfg)
			down := cfg
			down.ListingDown, down.ListingDownAs = 12*time.Hour, as
			from, to := down.outage()
			if from < cfg.Warmup || to > cfg.Horizon || to-from != 12*time.Hour {
				t.Fatalf("outage %v to %v outside the measured window %v to %v", from, to, cfg.Warmup, cfg.Horizon)
			}
			h, d := scheduled(cfg, st), scheduled(down, st)
			var before int
			var hIn, dIn, hAfter, dAfter []time.Duration
			for s := range int32(st.n) {
				for i := st.relOff[s]; i < st.relOff[s+1]; i++ {
					at := st.relAt[i]
					switch {
					case !st.bookmarked[s] || at < cfg.Warmup || h.found[i] < 0 || d.found[i] < 0:
					case h.found[i] < from:
						// read before the outage began: nothing can differ
						before++
						if d.found[i] != h.found[i] {
							t.Fatalf("release at %v, read at %v when healthy, read at %v with an outage from %v", at, h.found[i], d.found[i], from)
						}
					case at >= from && at < to:
						hIn, dIn = append(hIn, h.found[i]-at), append(dIn, d.found[i]-at)
					case at >= to+time.Hour: // the first walk after it has named its backlog
						hAfter, dAfter = append(hAfter, h.found[i]-at), append(dAfter, d.found[i]-at)
					}
				}
			}
			if before < 50 || len(hIn) < 50 || len(hAfter) < 50 {
				t.Fatalf("releases before %d, in %d, after %d: too few to judge", before, len(hIn), len(hAfter))
			}
			in, inHealthy := quantiles(dIn), quantiles(hIn)
			after, afterHealthy := quantiles(dAfter), quantiles(hAfter)
			t.Logf("in the outage p50/p95/p99 %v against %v healthy; after it %v against %v", in, inHealthy, after, afterHealthy)
			if in[0] < 10*inHealthy[0] || in[2] < 10*inHealthy[2] {
				t.Errorf("in the outage p50 %v p99 %v, healthy %v %v: the outage cost nothing", in[0], in[2], inHealthy[0], inHealthy[2])
			}
			// After it, the Lane reads as before: a slot's shift at most.
			for i, name := range []string{"p50", "p95", "p99"} {
				if diff := (after[i] - afterHealthy[i]).Abs(); diff > 30*time.Second {
					t.Errorf("after the outage %s %v, healthy %v: %v apart", name, after[i], afterHealthy[i], diff)
				}
			}
		})
	}
}

func TestTheLaneJudgesItsListingAsPollerDoes(t *testing.T) {
	t.Parallel()
	// 36 hours in the measured window of small(): hours 12 to 48 after
	// the 12-hour warm-up (of 72).
	cases := []struct {
		name  string
		as    outageKind
		after time.Duration // into the outage
		want  bool          // Policy.Listing: cadence reads stretched
	}{
		{"an unreachable listing says nothing about the reader, an hour in", unreachable, time.Hour, true},
		{"an unreachable listing says nothing about the reader, 30 hours in", unreachable, 30 * time.Hour, true},
		{"a listing that names nothing is not yet broken 11 hours in", empty, 11 * time.Hour, true},
		{"a listing that names nothing is broken 13 hours in", empty, 13 * time.Hour, false},
		{"a listing named again is healthy again, two hours after the outage", empty, 38 * time.Hour, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := small()
			cfg.ListingDown, cfg.ListingDownAs = 36*time.Hour, tc.as
			from, _ := cfg.outage()
			x := newScheduler(cfg, oneSite(cfg))
			x.start()
			stop := from + tc.after
			pages := 0
			for t := time.Duration(0); t < stop; {
				if t >= stop-time.Hour {
					pages -= x.pages
					t = x.step(t)
					pages += x.pages
					continue
				}
				t = x.step(t)
			}
			if x.policy.Listing != tc.want {
				t.Fatalf("Policy.Listing %v %v into a %s outage, want %v", x.policy.Listing, tc.after, tc.as, tc.want)
			}
			// Healthy, the listing is walked every five minutes; broken,
			// one page an hour (schedule.BrokenListingEvery).
			if broken := !tc.want; broken && pages > 2 || !broken && pages < 12 {
				t.Fatalf("%d listing pages in the last hour (broken: %v)", pages, broken)
			}
		})
	}
}

func TestTheListingFlagsAreRefusedOutOfRange(t *testing.T) {
	t.Parallel()
	base := []string{"-n", "600", "-hours", "30", "-warmup", "6"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"a loss above one", []string{"-listing-loss", "1.5"}, "-listing-loss 1.5 is not a share: it must be within 0..1"},
		{"a negative loss", []string{"-listing-loss", "-0.1"}, "-listing-loss -0.1 is not a share"},
		{"a loss that is not a number", []string{"-listing-loss", "NaN"}, "-listing-loss NaN is not a share"},
		{"negative hours down", []string{"-listing-down", "-2"}, "-listing-down -2 must not be negative hours"},
		{"an outage longer than the measured window", []string{"-listing-down", "25"}, "-listing-down must fit in the measured window"},
		{"an outage of an unknown kind", []string{"-listing-down", "2", "-listing-down-as", "slow"}, `-listing-down-as "slow": want unreachable or empty`},
		{"a fault without a listing", []string{"-listing-loss", "0.1", "-listing-every", "0"}, "need a listing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			err := Run(context.Background(), append(slices.Clone(base), tc.args...), nil, &out, &errOut, func(string) string { return "" })
			if err == nil {
				t.Fatalf("%v accepted:\n%s", tc.args, out.String())
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "bench-freshness: ") {
				t.Fatalf("error %q, want one line naming %q", msg, tc.want)
			}
			if out.Len() > 0 {
				t.Fatalf("refused, yet printed:\n%s", out.String())
			}
		})
	}
}

func TestEachListingFaultIsPricedAgainstTheHealthyListing(t *testing.T) {
	t.Parallel()
	args := []string{"-n", "6000", "-hours", "72", "-warmup", "12", "-seed", "7", "-listing-loss", "0.1", "-listing-down", "12"}
	var table, js bytes.Buffer
	if err := Run(context.Background(), args, nil, &table, &table, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| scheduled_listing_loss |", "| scheduled_listing_down |",
		"| listing omits 10% of its rows, all releases |",
		"| listing unreachable for 12.0 h (hours 36 to 48), releases in the outage |",
	} {
		if !strings.Contains(table.String(), want) {
			t.Fatalf("table lacks %q:\n%s", want, table.String())
		}
	}
	if err := Run(context.Background(), append(args, "-json"), nil, &js, &js, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	var got struct {
		ListingLoss float64 `json:"listing_loss"`
		ListingDown struct {
			As   string  `json:"as"`
			From float64 `json:"from_hours"`
		} `json:"listing_down"`
		Strategies map[string]struct {
			P50      float64 `json:"p50_delay_s"`
			InOutage struct {
				Chapters int     `json:"chapters"`
				P50      float64 `json:"p50_delay_s"`
			} `json:"in_outage"`
		} `json:"strategies"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatalf("decode: %v\n%s", err, js.String())
	}
	healthy, down := got.Strategies["scheduled"], got.Strategies["scheduled_listing_down"]
	if got.ListingLoss != 0.1 || got.ListingDown.As != "unreachable" || got.ListingDown.From != 36 ||
		len(got.Strategies) != 4 || down.InOutage.Chapters == 0 || down.InOutage.Chapters != healthy.InOutage.Chapters ||
		down.InOutage.P50 <= healthy.InOutage.P50 {
		t.Fatalf("json %+v", got)
	}
}
