// Package schedule is the Lane's scheduling policy (ADR 0016), kept free of
// the database and the network so that the Lane and the freshness
// simulation (mangabookmark bench-freshness) run the same rules:
//
//   - the order a Lane reads its Series in (Rank);
//   - how long after a read a Series is next owed one (Policy.Next), from its
//     release cadence, learned from the times its chapters arrived (Learn),
//     and never later than the backstop;
//   - how far a Lane walks its Site's latest-updates listing (Walk).
//
// The store's due query (store/poll.go) is this order written as SQL over
// partial indexes; TestStoreOrderIsTheSchedule holds the two equal.
package schedule

import (
	"time"
)

// Rank is the class a due Series is read in, first to last. Within a class
// the earlier key goes first (CONTEXT.md, Scheduler).
type Rank int

const (
	// Forced: the owner asked for a read of this Series (key: the ask).
	Forced Rank = iota
	// LaneForced: the owner asked for a read of the whole Lane, and this
	// Series was checked before that (key: its check).
	LaneForced
	// Sighted: a Reader's Sighting raised Latest Chapter since the last
	// check (key: the Sighting), so a read confirms or contradicts it at once.
	Sighted
	// Listed: the listing named a chapter above Latest Chapter since the
	// last check (key: when it was seen).
	Listed
	// Due: the Series' own next read time has come, by its cadence or the
	// backstop (key: that time). Orphans are only ever due this way.
	Due
	// Ahead: spare budget. A bookmarked Series not read for at least the
	// floor, though its next read time has not come (key: that time).
	Ahead
)

// String names the rank for logs and the simulation's table.
func (r Rank) String() string {
	switch r {
	case Forced:
		return "forced"
	case LaneForced:
		return "lane_forced"
	case Sighted:
		return "sighted"
	case Listed:
		return "listed"
	case Due:
		return "due"
	case Ahead:
		return "ahead"
	}
	return "unknown"
}

// Defaults of a Policy's zero fields.
const (
	DefaultFloor    = time.Hour          // POLL_EVERY's default
	DefaultBackstop = 7 * 24 * time.Hour // POLL_BACKSTOP's default
)

// Policy is how often a Series is read when nothing urgent names it.
type Policy struct {
	// Floor is the least time between two reads of one Series that nothing
	// urgent asked for (POLL_EVERY).
	Floor time.Duration
	// Backstop is the most time between two reads of a Series that is not
	// Finished, budget allowing (POLL_BACKSTOP).
	Backstop time.Duration
	// Listing says the Lane's listing is read and not broken: it finds
	// most chapters first, so reads by cadence are stretched ListingStretch
	// times, leaving the budget to the backstop (ADR 0016).
	Listing bool
}

// ListingStretch is how much longer the cadence waits while a healthy
// listing watches the Site. Measured with bench-freshness at 1,000,000
// Series: unstretched, cadence reads found few chapters the listing had not
// named and pushed the oldest read past a 7-day backstop.
const ListingStretch = 4

// Normalised is p with its zero fields at their defaults, and the floor
// never above the backstop.
func (p Policy) Normalised() Policy {
	if p.Floor <= 0 {
		p.Floor = DefaultFloor
	}
	if p.Backstop <= 0 {
		p.Backstop = DefaultBackstop
	}
	p.Floor = min(p.Floor, p.Backstop)
	return p
}

// Series is what the policy knows of one Series.
type Series struct {
	// Bookmarked is false for an orphan: nobody tracks it, so it is read
	// only at the backstop.
	Bookmarked bool
	// Cadence is the learned time between two chapters; zero is unknown.
	Cadence time.Duration
	// ArrivedAt is when a Poll last confirmed a new chapter; zero is never.
	ArrivedAt time.Time
}

// Interval is how long after a read at now the Series is next owed one:
//
//   - an orphan, or a Series whose cadence is unknown: the backstop, aimed
//     a little inside it (spare budget reads bookmarked Series sooner, as
//     Ahead);
//   - before its next chapter is expected (last arrival + cadence): then;
//   - overdue by less than three cadences: a quarter of its cadence, so a
//     late chapter is found within a quarter of the usual wait;
//   - quiet for longer: half the silence, so a Series that stopped
//     releasing drifts to the backstop instead of costing reads forever.
//
// Always within [Floor, Backstop]. The listing finds most chapters first;
// this is what finds the ones it misses, or all of them while it is broken.
func (p Policy) Interval(s Series, now time.Time) time.Duration {
	p = p.Normalised()
	if !s.Bookmarked || s.Cadence <= 0 || s.ArrivedAt.IsZero() {
		return p.aim()
	}
	quiet := now.Sub(s.ArrivedAt)
	var d time.Duration
	switch {
	case quiet < s.Cadence:
		d = s.Cadence - quiet
	case quiet < 4*s.Cadence:
		d = s.Cadence / 4
	default:
		d = quiet / 2
	}
	if p.Listing {
		d *= ListingStretch
	}
	return min(max(d, p.Floor), p.aim())
}

// aim is the longest interval the schedule sets: a fiftieth inside the
// backstop (3.4 hours of 7 days), so that a Series whose time has come
// and waits behind urgent reads for a while is still read within the
// backstop. bench-freshness measured the wait at up to two minutes at
// 1,000,000 Series without it.
func (p Policy) aim() time.Duration {
	return max(p.Backstop-p.Backstop/50, p.Floor)
}

// Next is when a Series read at now is next owed a read.
func (p Policy) Next(s Series, now time.Time) time.Time {
	return now.Add(p.Interval(s, now))
}

// MinGap is the shortest gap between two arrivals Learn believes: two
// chapters confirmed minutes apart are one release read twice, not a
// Series that releases every minute.
const MinGap = time.Hour

// Learn is the cadence after a chapter arrived at now, given the cadence
// before (zero: unknown) and the previous arrival (zero: none). The first
// gap is the cadence; later gaps move it a quarter of the way, so one odd
// week does not undo a year's rhythm.
func Learn(cadence time.Duration, prev, now time.Time) time.Duration {
	if prev.IsZero() || !now.After(prev) {
		return cadence
	}
	gap := max(now.Sub(prev), MinGap)
	if cadence <= 0 {
		return gap
	}
	return (3*cadence + gap) / 4
}

// FallbackEvery is about how often each Series of a Lane of n Series is
// read while its listing finds nothing (failing, broken or off), so how
// often a new chapter can be found at all: spare budget reads every
// bookmarked Series once it is Floor old (Ahead), so every Floor while the
// Lane's requests, one per spacing, suffice for its n Series, and every
// n × spacing once they do not (ADR 0016, Revised). Orphans are counted in
// n though they are read at the backstop only, so it errs long. A chapter
// waits up to this, half of it on average.
func (p Policy) FallbackEvery(n int64, spacing time.Duration) time.Duration {
	p = p.Normalised()
	return max(p.Floor, time.Duration(n)*max(spacing, 0))
}
