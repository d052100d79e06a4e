package freshness

import (
	"slices"
	"time"

	"github.com/mangabookmark/mangabookmark/poller/schedule"
)

// lane is one strategy's Lane on one Site: what it has read, and the
// record the report is made from.
type lane struct {
	cfg Config
	st  *site

	next        int     // releases that have happened, st.releases[:next]
	lastRelease []int32 // each Series' newest release so far (index into st.releases), -1 for none
	latest      []int32 // Latest Chapter, as the Series' last read saw it
	pending     []int32 // each Series' first release no read has seen yet (index into st.relAt)
	readAt      []time.Duration

	requests []time.Duration // every request to the Site, listing pages included, in order
	delays   []time.Duration // release to detection, for releases after the warm-up
	found    []time.Duration // when a read saw each release (index into st.relAt), -1 not yet
	maxAge   time.Duration   // the oldest read seen at any moment after the first backstop period (steady state)
	// upgradeAge is the oldest read seen in the first backstop period after
	// the warm-up: the Lane still drains the order round-robin left.
	upgradeAge time.Duration
	reads      [schedule.Ahead + 1]int
	pages      int // listing pages read

	cadenceReads  int // Due reads of a Series with a learned cadence
	foundUnlisted int // arrivals a read found with no listing row asking for it
}

func newLane(cfg Config, st *site) *lane {
	l := &lane{
		cfg:         cfg,
		st:          st,
		lastRelease: make([]int32, st.n),
		latest:      make([]int32, st.n),
		pending:     slices.Clone(st.relOff[:st.n]),
		readAt:      slices.Clone(st.readAt),
		found:       make([]time.Duration, len(st.relAt)),
	}
	for i := range l.found {
		l.found[i] = -1
	}
	for s := range st.n {
		l.lastRelease[s] = -1
		l.latest[s] = baseChapter
	}
	return l
}

// advance lets every release up to t happen.
func (l *lane) advance(t time.Duration) {
	for l.next < len(l.st.releases) && l.st.releases[l.next].at <= t {
		l.lastRelease[l.st.releases[l.next].series] = int32(l.next)
		l.next++
	}
}

// chapter is Series s's newest chapter on the Site now.
func (l *lane) chapter(s int32) int32 {
	if i := l.lastRelease[s]; i >= 0 {
		return l.st.releases[i].chapter
	}
	return baseChapter
}

// request spends one request slot at t. The log is what the politeness
// test reads.
func (l *lane) request(t time.Duration) {
	l.advance(t)
	l.requests = append(l.requests, t)
}

// read is a read of Series s's own page at t, picked in rank: it sees every
// chapter released up to t. It reports whether Latest Chapter rose (an
// arrival).
func (l *lane) read(s int32, t time.Duration, rank schedule.Rank) (arrived bool) {
	l.request(t)
	l.reads[rank]++
	l.age(t, t-l.readAt[s])
	l.readAt[s] = t
	ch := l.chapter(s)
	arrived = ch > l.latest[s]
	l.latest[s] = ch
	i, end := l.pending[s], l.st.relOff[s+1]
	for ; i < end && l.st.relAt[i] <= t; i++ {
		l.found[i] = t
		if l.st.relAt[i] >= l.cfg.Warmup && l.st.bookmarked[s] {
			l.delays = append(l.delays, t-l.st.relAt[i])
		}
	}
	l.pending[s] = i
	return arrived
}

// delaysIn are the delays of the bookmarked Series' releases in [from, to),
// sorted, one no read saw counting up to the horizon as in finish.
func (l *lane) delaysIn(from, to time.Duration) []time.Duration {
	var d []time.Duration
	for s := range int32(l.st.n) {
		if !l.st.bookmarked[s] {
			continue
		}
		for i := l.st.relOff[s]; i < l.st.relOff[s+1]; i++ {
			switch at := l.st.relAt[i]; {
			case at < from || at >= to:
			case l.found[i] >= 0:
				d = append(d, l.found[i]-at)
			default:
				d = append(d, l.cfg.Horizon-at)
			}
		}
	}
	slices.Sort(d)
	return d
}

// finish closes the record at the horizon: a release no read saw counts
// with its delay so far, and the oldest read at the end is a moment too.
func (l *lane) finish() {
	end := l.cfg.Horizon
	for s := range int32(l.st.n) {
		for i := l.pending[s]; i < l.st.relOff[s+1]; i++ {
			if at := l.st.relAt[i]; at >= l.cfg.Warmup && at < end && l.st.bookmarked[s] {
				l.delays = append(l.delays, end-at)
			}
		}
		l.age(end, end-l.readAt[s])
	}
}

// age records a read's age at t: in the upgrade period (the first backstop
// after the warm-up, while the Lane drains the order the old Lane left), or
// in the steady state after it. A run no longer than that has only the
// first, and its steady figure is the same.
func (l *lane) age(t, age time.Duration) {
	switch steady := max(l.cfg.Warmup, l.cfg.Backstop); {
	case t < l.cfg.Warmup:
	case t < steady && l.cfg.Horizon > steady:
		l.upgradeAge = max(l.upgradeAge, age)
	default:
		l.maxAge = max(l.maxAge, age)
		l.upgradeAge = max(l.upgradeAge, age)
	}
}

// roundRobin is today's Lane: the Series with the oldest check, once it is
// at least Floor (POLL_EVERY) old, one per spacing; no listing.
func roundRobin(cfg Config, st *site) *lane {
	l := newLane(cfg, st)
	order := make([]int32, st.n)
	for s := range order {
		order[s] = int32(s)
	}
	slices.SortFunc(order, func(a, b int32) int { return compare(st.readAt[a], st.readAt[b]) })
	for t, i := time.Duration(0), 0; t < cfg.Horizon && st.n > 0; {
		s := order[i]
		if due := l.readAt[s] + cfg.Floor; due > t {
			t = due
			continue
		}
		l.read(s, t, schedule.Due)
		i = (i + 1) % st.n
		t += cfg.Spacing
	}
	l.finish()
	return l
}
