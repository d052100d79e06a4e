package freshness

import (
	"math/rand/v2"
	"slices"
	"time"
)

// A release class: the share of Series in it and the range their mean
// time between chapters is drawn from, uniformly.
type class struct {
	name     string
	share    float64
	min, max time.Duration
}

const (
	day   = 24 * time.Hour
	week  = 7 * day
	month = 30 * day
)

// mix is the heavy-tailed release mix: most Series dormant, a few weekly
// or daily. Each Series' chapters are a Poisson process at its own rate.
var mix = []class{
	{"dormant", 0.70, 6 * month, 24 * month},
	{"monthly", 0.20, 2 * week, 6 * week},
	{"weekly", 0.08, 5 * day, 10 * day},
	{"daily", 0.02, day, 2 * day},
}

// baseChapter is every Series' Latest Chapter at the start; its k-th
// release is baseChapter+k.
const baseChapter = 10

// release is one new chapter on a Site.
type release struct {
	at      time.Duration // since the start of the simulation
	series  int32         // index among the Site's Series
	chapter int32
}

// site is one Site's Series and what happens to them, shared read-only by
// both strategies so they see the same world.
type site struct {
	n          int
	bookmarked []bool
	readAt     []time.Duration // the one read before the start (negative)
	relOff     []int32         // Series s's releases are relAt[relOff[s]:relOff[s+1]]
	relAt      []time.Duration
	releases   []release // every release, in time order
	omit       []float32 // releases[j]'s listing row is omitted below ListingLoss
}

// newSite draws n Series and their releases over horizon.
func newSite(cfg Config, n int, rng *rand.Rand) *site {
	st := &site{
		n:          n,
		bookmarked: make([]bool, n),
		readAt:     make([]time.Duration, n),
		relOff:     make([]int32, n+1),
	}
	for s := range n {
		st.bookmarked[s] = rng.Float64() < cfg.Bookmarked
		st.readAt[s] = -time.Duration(rng.Float64() * float64(cfg.Backstop))
		mean := drawMean(rng)
		for t := expAfter(0, mean, rng); t < cfg.Horizon; t = expAfter(t, mean, rng) {
			st.relAt = append(st.relAt, t)
			st.releases = append(st.releases, release{at: t, series: int32(s), chapter: int32(baseChapter + len(st.relAt) - int(st.relOff[s]))})
		}
		st.relOff[s+1] = int32(len(st.relAt))
	}
	slices.SortFunc(st.releases, func(a, b release) int {
		if a.at != b.at {
			return compare(a.at, b.at)
		}
		return int(a.series - b.series)
	})
	// Drawn after everything else, so the world of a seed is the same
	// whatever the loss.
	st.omit = make([]float32, len(st.releases))
	for j := range st.omit {
		st.omit[j] = rng.Float32()
	}
	return st
}

func compare(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// drawMean picks a class by share, then a mean time between chapters in it.
func drawMean(rng *rand.Rand) time.Duration {
	u := rng.Float64()
	for _, c := range mix {
		if u < c.share {
			return c.min + time.Duration(rng.Float64()*float64(c.max-c.min))
		}
		u -= c.share
	}
	last := mix[len(mix)-1]
	return last.max
}

// expAfter is the next arrival of a Poisson process with this mean after t.
func expAfter(t, mean time.Duration, rng *rand.Rand) time.Duration {
	return t + time.Duration(rng.ExpFloat64()*float64(mean))
}
