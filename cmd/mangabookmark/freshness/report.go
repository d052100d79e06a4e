package freshness

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/mangabookmark/mangabookmark/poller/schedule"
)

// Report is one simulation's outcome, a Result per strategy.
type Report struct {
	Config     Config
	Strategies []Result
}

// Result is one strategy over every Site.
type Result struct {
	Name            string
	Chapters        int // releases measured
	Undetected      int // of which no read saw by the horizon
	P50, P95, P99   time.Duration
	MaxPerHour      int
	BackstopMaxAge  time.Duration
	UpgradeMaxAge   time.Duration
	OldestAtEnd     time.Duration
	Reads           map[string]int // Series reads by the rank they were picked in
	ListingPages    int
	CadenceReads    int
	FoundUnlisted   int
	RequestsPerSite []int
	// InOutage is the releases during the listing outage (Config.outage),
	// for every strategy of a run that has one: the healthy Lanes' figures
	// over the same releases are what the outage is priced against.
	InOutage *Window
}

// Window is the delays of the releases in a stretch of the run.
type Window struct {
	Chapters      int
	P50, P95, P99 time.Duration
}

func window(lanes []*lane, from, to time.Duration) *Window {
	var d []time.Duration
	for _, l := range lanes {
		d = append(d, l.delaysIn(from, to)...)
	}
	slices.Sort(d)
	return &Window{Chapters: len(d), P50: percentile(d, 0.50), P95: percentile(d, 0.95), P99: percentile(d, 0.99)}
}

func summarise(name string, cfg Config, lanes []*lane) Result {
	d := sortedDelays(lanes)
	r := Result{Name: name, Chapters: len(d), P50: percentile(d, 0.50), P95: percentile(d, 0.95), P99: percentile(d, 0.99), Reads: map[string]int{}}
	if cfg.ListingDown > 0 {
		from, to := cfg.outage()
		r.InOutage = window(lanes, from, to)
	}
	for _, l := range lanes {
		r.MaxPerHour = max(r.MaxPerHour, maxPerHour(l.requests))
		r.BackstopMaxAge = max(r.BackstopMaxAge, l.maxAge)
		r.UpgradeMaxAge = max(r.UpgradeMaxAge, l.upgradeAge)
		r.ListingPages += l.pages
		r.CadenceReads += l.cadenceReads
		r.FoundUnlisted += l.foundUnlisted
		r.RequestsPerSite = append(r.RequestsPerSite, len(l.requests))
		for rank, n := range l.reads {
			if n > 0 {
				r.Reads[schedule.Rank(rank).String()] += n
			}
		}
		for s := range l.readAt {
			r.OldestAtEnd = max(r.OldestAtEnd, cfg.Horizon-l.readAt[s])
		}
		for s := range int32(l.st.n) {
			for i := l.pending[s]; i < l.st.relOff[s+1]; i++ {
				if at := l.st.relAt[i]; at >= cfg.Warmup && at < cfg.Horizon && l.st.bookmarked[s] {
					r.Undetected++
				}
			}
		}
	}
	return r
}

// writeTable prints the settings, then one row per strategy.
func (rep Report) writeTable(w io.Writer, took time.Duration) {
	c := rep.Config
	fmt.Fprintf(w, "bench-freshness: %d Series on %d Sites, %d h simulated (first %d h warm-up), seed %d, spacing %s, listing every %s (K=%d), floor %s, backstop %s, %.0f%% bookmarked\n",
		c.N, Sites, int(c.Horizon.Hours()), int(c.Warmup.Hours()), c.Seed, c.Spacing, c.ListingEvery, c.K, c.Floor, c.Backstop, 100*c.Bookmarked)
	fmt.Fprintf(w, "release mix: %s\n\n", fmtMix())
	fmt.Fprintln(w, "| strategy | chapters | undetected | p50 delay | p95 delay | p99 delay | max req/h/site | backstop max age | upgrade max age | oldest at end | reads (rank: n) | due by cadence | found unlisted | listing pages |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rep.Strategies {
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s | %d | %s | %s | %s | %s | %d | %d | %d |\n",
			r.Name, r.Chapters, r.Undetected, human(r.P50), human(r.P95), human(r.P99), r.MaxPerHour,
			human(r.BackstopMaxAge), human(r.UpgradeMaxAge), human(r.OldestAtEnd), readsByRank(r.Reads), r.CadenceReads, r.FoundUnlisted, r.ListingPages)
	}
	rep.writeCosts(w)
	fmt.Fprintf(w, "\nsimulated in %s on %d cores\n", took.Round(time.Second), cores())
}

// writeCosts prints what each listing fault costs against the healthy
// scheduled run over the same releases: every measured release for a lossy
// listing, the releases during the outage for an outage.
func (rep Report) writeCosts(w io.Writer) {
	c := rep.Config
	var healthy Result
	var faults []Result
	for _, r := range rep.Strategies {
		switch r.Name {
		case "scheduled":
			healthy = r
		case "scheduled_listing_loss", "scheduled_listing_down":
			faults = append(faults, r)
		}
	}
	if len(faults) == 0 {
		return
	}
	fmt.Fprintln(w, "\nwhat the listing's faults cost, against the healthy listing (scheduled) over the same releases:")
	fmt.Fprintln(w, "| fault | releases | p50 delay | p95 delay | p99 delay | healthy p50 | healthy p95 | healthy p99 |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range faults {
		got, base, what := Window{r.Chapters, r.P50, r.P95, r.P99}, Window{healthy.Chapters, healthy.P50, healthy.P95, healthy.P99}, ""
		if r.Name == "scheduled_listing_loss" {
			what = fmt.Sprintf("listing omits %.0f%% of its rows, all releases", 100*c.ListingLoss)
		} else {
			from, to := c.outage()
			got, base = *r.InOutage, *healthy.InOutage
			what = fmt.Sprintf("listing %s for %s (hours %s to %s), releases in the outage", c.outageKind(), human(c.ListingDown), hoursOf(from), hoursOf(to))
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", what, got.Chapters,
			human(got.P50), human(got.P95), human(got.P99), human(base.P50), human(base.P95), human(base.P99))
	}
}

func hoursOf(d time.Duration) string { return strconv.FormatFloat(d.Hours(), 'f', -1, 64) }

func readsByRank(m map[string]int) string {
	s := ""
	for r := schedule.Forced; r <= schedule.Ahead; r++ {
		if n, ok := m[r.String()]; ok {
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%s: %d", r, n)
		}
	}
	return s
}

// writeJSON prints the one object issue 20 names; the keys beyond its five
// a strategy are extra.
func (rep Report) writeJSON(w io.Writer) error {
	c := rep.Config
	strategies := map[string]map[string]any{}
	for _, r := range rep.Strategies {
		strategies[r.Name] = map[string]any{
			"p50_delay_s":                    r.P50.Seconds(),
			"p95_delay_s":                    r.P95.Seconds(),
			"p99_delay_s":                    r.P99.Seconds(),
			"max_requests_per_hour_per_site": r.MaxPerHour,
			"backstop_max_age_s":             r.BackstopMaxAge.Seconds(),
			"upgrade_max_age_s":              r.UpgradeMaxAge.Seconds(),
			"oldest_at_end_s":                r.OldestAtEnd.Seconds(),
			"chapters":                       r.Chapters,
			"undetected":                     r.Undetected,
			"reads":                          r.Reads,
			"listing_pages":                  r.ListingPages,
			"due_reads_by_cadence":           r.CadenceReads,
			"found_unlisted":                 r.FoundUnlisted,
			"requests_per_site":              r.RequestsPerSite,
		}
		if o := r.InOutage; o != nil {
			strategies[r.Name]["in_outage"] = map[string]any{
				"chapters": o.Chapters, "p50_delay_s": o.P50.Seconds(), "p95_delay_s": o.P95.Seconds(), "p99_delay_s": o.P99.Seconds(),
			}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{
		"n":               c.N,
		"sites":           Sites,
		"spacing_s":       c.Spacing.Seconds(),
		"strategies":      strategies,
		"seed":            c.Seed,
		"hours":           c.Horizon.Hours(),
		"warmup_hours":    c.Warmup.Hours(),
		"listing_every_s": c.ListingEvery.Seconds(),
		"k":               c.K,
		"floor_s":         c.Floor.Seconds(),
		"backstop_s":      c.Backstop.Seconds(),
		"bookmarked":      c.Bookmarked,
		"release_mix":     fmtMix(),
		"listing_loss":    c.ListingLoss,
		"listing_down":    outageJSON(c),
	})
}

// outageJSON is the outage's place in the run, or null without one.
func outageJSON(c Config) any {
	if c.ListingDown <= 0 {
		return nil
	}
	from, to := c.outage()
	return map[string]any{"as": c.outageKind(), "from_hours": from.Hours(), "to_hours": to.Hours()}
}

// human is a duration at the scale it is read at: seconds, minutes,
// hours or days.
func human(d time.Duration) string {
	switch {
	case d < 2*time.Minute:
		return fmt.Sprintf("%.0f s", d.Seconds())
	case d < 2*time.Hour:
		return fmt.Sprintf("%.1f min", d.Minutes())
	case d < 2*day:
		return fmt.Sprintf("%.1f h", d.Hours())
	}
	return fmt.Sprintf("%.1f d", d.Hours()/24)
}

func cores() int { return runtime.NumCPU() }
