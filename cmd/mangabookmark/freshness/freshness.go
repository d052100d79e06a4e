// Package freshness is `mangabookmark bench-freshness`: a simulation, on a
// virtual clock, of how long a new chapter waits before a Lane finds it,
// under today's round-robin and under the scheduler of issue 20 (ADR 0016).
// Numbers only: nothing here is a timed test.
//
// What is real and what is a stand-in. The scheduled strategy runs
// poller/schedule itself: its Rank order (Listed, then Due, then Ahead;
// nothing here is Forced or Sighted), Policy.Next for every next read,
// Learn for every cadence, and Walk for every listing walk, over in-memory
// queues in place of PostgreSQL (the store's due query is the same order
// written as SQL; TestStoreOrderIsTheSchedule holds the two equal). The
// Sites, their listings and the fetches are stand-ins: a request costs one
// slot of the Site's spacing and answers at once, and a Series read never
// fails. The listing fails only when asked to, each fault in a scheduled
// run of its own beside the healthy one: -listing-loss omits a share of its
// rows (each release's row drawn once from the seed), -listing-down makes
// it answer nothing for some hours in the middle of the measured window,
// unreachable or with pages that name nothing (fault.go); the Lane judges
// its listing by poller's own rule (scheduler.listingHealth).
//
// The world. N Series, spread evenly over the six Sites, each with one
// Lane that makes at most one request per spacing, listing pages and Series
// reads alike. Each Series releases chapters as a Poisson process at its
// own rate, drawn from a heavy-tailed mix (mix: 70% a chapter every 6–24
// months, 20% every 2–6 weeks, 8% every 5–10 days, 2% every 1–2 days, the
// mean uniform within its class), from a seeded math/rand/v2. A fraction of
// the Series is bookmarked; the rest are orphans. No Series is Finished.
// A Site's listing at time t is one row per Series that released in the
// simulation, by its newest release, newest first, K rows a page, with a
// next page while older rows exist; the Series it names are all known to
// the Lane (a real listing also names Series nobody tracks, which only
// takes rows).
//
// The start is a server upgraded to the scheduler: every Series was read
// once at a uniformly random time in the last backstop and its Latest
// Chapter is current; the scheduled strategy starts as migration 0017
// leaves it (no cadence, no arrival, next read an hour after the check) and
// learns cadences only from the arrivals it sees. Both strategies see the
// same releases.
//
// What is measured. A chapter's delay is from its release to the first
// read of its Series' own page at or after it (a read sees every chapter
// released before it; a listing row alone detects nothing). Only releases
// of bookmarked Series after the warm-up count (an orphan's chapter
// concerns no Reader, and is read at the backstop); one no read saw by the horizon counts with
// delay = horizon − release. Requests per hour is the most requests to one
// Site in any sliding hour, over all Sites. The backstop age is the longest
// time since the last read of any Series at any moment of the steady state:
// after the first backstop period (and the warm-up), up to the horizon
// included. The first backstop period is the upgrade: the new Lane drains
// the order the round-robin left, every Series owed at once (migration
// 0017), while the listing's confirmations take their share; its oldest
// read is reported apart (upgrade max age). A run no longer than one
// backstop has only that period, and both figures are the same.
package freshness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/mangabookmark/mangabookmark/poller/schedule"
)

// Sites is how many Sites (and Lanes) the Series are spread over.
const Sites = 6

// Config is one simulation.
type Config struct {
	N            int
	Horizon      time.Duration // simulated time
	Warmup       time.Duration // releases before this are not measured
	Seed         uint64
	Spacing      time.Duration // POLL_SPACING
	ListingEvery time.Duration // LISTING_EVERY; 0 turns the listing off
	Backstop     time.Duration // POLL_BACKSTOP
	Floor        time.Duration // POLL_EVERY
	K            int           // listing rows a page
	Bookmarked   float64       // the share of Series with a Bookmark

	// The listing's faults, each priced by a run of its own beside the
	// healthy scheduled one (never together): ListingLoss is the share of
	// rows the listing omits, ListingDown how long the listing answers
	// nothing, the outage centred in the measured window (outage), and
	// ListingDownAs how it answers nothing (zero: unreachable).
	ListingLoss   float64
	ListingDown   time.Duration
	ListingDownAs outageKind
}

// Run is the command: its flags, the simulation, one table or one JSON
// object on stdout.
func Run(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer, _ func(string) string) error {
	fs := flag.NewFlagSet("bench-freshness", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := Config{}
	fs.IntVar(&cfg.N, "n", 1_000_000, "Series, spread over the six Sites")
	hours := fs.Int("hours", 720, "simulated hours")
	warmup := fs.Int("warmup", 24, "hours before releases are measured")
	fs.Uint64Var(&cfg.Seed, "seed", 20, "seed of the releases and the start state")
	fs.DurationVar(&cfg.Spacing, "spacing", 3*time.Second, "least time between two requests to a Site (POLL_SPACING)")
	fs.DurationVar(&cfg.ListingEvery, "listing-every", schedule.DefaultListingEvery, "listing walk interval (LISTING_EVERY); 0 turns it off")
	fs.DurationVar(&cfg.Backstop, "backstop", schedule.DefaultBackstop, "POLL_BACKSTOP")
	fs.DurationVar(&cfg.Floor, "floor", schedule.DefaultFloor, "POLL_EVERY")
	fs.IntVar(&cfg.K, "k", 30, "listing rows a page")
	fs.Float64Var(&cfg.Bookmarked, "bookmarked", 0.9, "share of Series with a Bookmark; the rest are orphans")
	fs.Float64Var(&cfg.ListingLoss, "listing-loss", 0, "share of listing rows the listing omits (0..1), each release's row drawn once from the seed; priced in a run of its own beside the healthy one")
	down := fs.Float64("listing-down", 0, "hours the listing answers nothing, centred in the measured window; priced in a run of its own beside the healthy one")
	downAs := fs.String("listing-down-as", string(unreachable), "how the listing answers nothing: unreachable (no answer: the Lane still counts its listing healthy) or empty (pages that name nothing: broken after 12 h)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.Horizon = time.Duration(*hours) * time.Hour
	cfg.Warmup = time.Duration(*warmup) * time.Hour
	if err := cfg.setOutage(*down, *downAs); err != nil {
		return err
	}
	if err := cfg.valid(); err != nil {
		return err
	}
	start := time.Now()
	rep := Simulate(ctx, cfg)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if *asJSON {
		return rep.writeJSON(stdout)
	}
	rep.writeTable(stdout, time.Since(start))
	return nil
}

func (c Config) valid() error {
	switch {
	case c.N < Sites:
		return errors.New("bench-freshness: -n must be at least 6, a Series a Site")
	case c.Horizon <= c.Warmup:
		return errors.New("bench-freshness: -hours must be more than -warmup")
	case c.Spacing <= 0 || c.Floor <= 0 || c.Backstop < c.Floor:
		return errors.New("bench-freshness: -spacing and -floor must be positive, -backstop at least -floor")
	case c.K < 1 || c.Bookmarked < 0 || c.Bookmarked > 1:
		return errors.New("bench-freshness: -k must be positive and -bookmarked within 0..1")
	case c.ListingEvery < 0:
		return errors.New("bench-freshness: -listing-every must not be negative")
	case !(c.ListingLoss >= 0 && c.ListingLoss <= 1): // NaN too
		return fmt.Errorf("bench-freshness: -listing-loss %v is not a share: it must be within 0..1", c.ListingLoss)
	case c.ListingDown < 0:
		return errors.New("bench-freshness: -listing-down must not be negative hours")
	case c.ListingDown > c.Horizon-c.Warmup:
		return errors.New("bench-freshness: -listing-down must fit in the measured window (-hours minus -warmup)")
	case (c.ListingLoss > 0 || c.ListingDown > 0) && c.ListingEvery == 0:
		return errors.New("bench-freshness: -listing-loss and -listing-down need a listing (-listing-every above 0)")
	}
	return nil
}

// setOutage reads -listing-down (hours) and -listing-down-as.
func (c *Config) setOutage(hours float64, as string) error {
	switch {
	case !(hours >= 0): // NaN too
		return fmt.Errorf("bench-freshness: -listing-down %v must not be negative hours", hours)
	case hours > c.Horizon.Hours():
		return errors.New("bench-freshness: -listing-down must fit in the measured window (-hours minus -warmup)")
	}
	c.ListingDown = time.Duration(hours * float64(time.Hour))
	switch k := outageKind(as); k {
	case unreachable, empty:
		c.ListingDownAs = k
		return nil
	}
	return fmt.Errorf("bench-freshness: -listing-down-as %q: want unreachable or empty", as)
}

// strategy is one way a Lane spends its requests.
type strategy struct {
	name string
	run  func(Config, *site) *lane
}

// strategies are the two Lanes compared, each under a healthy listing.
var strategies = []strategy{
	{"round_robin", roundRobin},
	{"scheduled", func(c Config, st *site) *lane { return scheduled(c.healthy(), st) }},
}

// healthy is c with a listing that omits nothing and never goes down.
func (c Config) healthy() Config {
	c.ListingLoss, c.ListingDown = 0, 0
	return c
}

// runs are the strategies, then the scheduled Lane under each listing
// fault c asks for, one fault a run, so each is priced against the
// healthy scheduled run over the same releases.
func runs(c Config) []strategy {
	all := slices.Clone(strategies)
	if loss := c.ListingLoss; loss > 0 {
		all = append(all, strategy{"scheduled_listing_loss", func(c Config, st *site) *lane {
			c = c.healthy()
			c.ListingLoss = loss
			return scheduled(c, st)
		}})
	}
	if down := c.ListingDown; down > 0 {
		all = append(all, strategy{"scheduled_listing_down", func(c Config, st *site) *lane {
			c = c.healthy()
			c.ListingDown = down
			return scheduled(c, st)
		}})
	}
	return all
}

// Simulate builds the six Sites, runs every strategy on each, and sums the
// Lanes up per strategy. The Sites are independent, so they run in parallel;
// each Site draws from its own stream of the seed, so the result does not
// depend on the order they run in.
func Simulate(ctx context.Context, cfg Config) Report {
	sites := make([]*site, Sites)
	all := runs(cfg)
	lanes := make([][]*lane, len(all))
	for i := range lanes {
		lanes[i] = make([]*lane, Sites)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range Sites {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			n := cfg.N / Sites
			if i < cfg.N%Sites {
				n++
			}
			sites[i] = newSite(cfg, n, rand.New(rand.NewPCG(cfg.Seed, uint64(i))))
		})
	}
	wg.Wait()
	for i := range Sites {
		for j, st := range all {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				if ctx.Err() == nil {
					lanes[j][i] = st.run(cfg, sites[i])
				}
			})
		}
	}
	wg.Wait()
	rep := Report{Config: cfg}
	for j, st := range all {
		if ctx.Err() != nil {
			break
		}
		rep.Strategies = append(rep.Strategies, summarise(st.name, cfg, lanes[j]))
	}
	return rep
}

// percentile is the p-th quantile of sorted (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// maxPerHour is the most requests in any sliding hour [t, t+1h) of one
// Site's log, which is in time order.
func maxPerHour(log []time.Duration) int {
	most := 0
	for i, j := 0, 0; i < len(log); i++ {
		for j < len(log) && log[j] < log[i]+time.Hour {
			j++
		}
		most = max(most, j-i)
	}
	return most
}

// sortedDelays merges the Lanes' delays, sorted.
func sortedDelays(lanes []*lane) []time.Duration {
	var all []time.Duration
	for _, l := range lanes {
		all = append(all, l.delays...)
	}
	slices.Sort(all)
	return all
}

func fmtMix() string {
	s := ""
	for i, c := range mix {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%.0f%% %s (%s–%s)", 100*c.share, c.name, human(c.min), human(c.max))
	}
	return s
}
