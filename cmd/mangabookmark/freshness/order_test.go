package freshness

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/poller/schedule"
)

// The simulation's queues pick what schedule.Order, the rule the store's
// due query is held to, puts first: at every step of a small Lane's four days,
// the same rank and key (two Series the listing marked on one page share a
// key, and either may go first).
func TestTheSimulatedLanePicksWhatTheSchedulesOrderPutsFirst(t *testing.T) {
	t.Parallel()
	cfg := small()
	cfg.N, cfg.Horizon, cfg.K, cfg.Spacing = 200, 4*day, 10, 30*time.Second
	x := newScheduler(cfg, newSite(cfg, cfg.N, rand.New(rand.NewPCG(3, 4))))
	x.start()
	picks := map[schedule.Rank]int{}
	for t0 := time.Duration(0); t0 < cfg.Horizon; {
		if x.cfg.ListingEvery > 0 && t0 >= x.nextListing {
			x.nextListing = t0 + x.cfg.ListingEvery
			t0 = x.walkListing(t0)
			continue
		}
		order := schedule.Order(x.candidates(), schedule.Ask{Now: at(t0), Floor: cfg.Floor})
		s, rank, ok := x.pick(t0)
		if !ok {
			if len(order) > 0 {
				t.Fatalf("at %s the simulation picked nothing; Order puts %s (%s) first", t0, order[0].ID, order[0].Rank)
			}
			t0 = x.wake(t0)
			continue
		}
		if len(order) == 0 {
			t.Fatalf("at %s the simulation picked %d (%s); Order has nothing due", t0, s, rank)
		}
		first, mine := order[0], x.picked(s, rank)
		if first.Rank != rank || !first.Key.Equal(mine) {
			t.Fatalf("at %s the simulation picked %d (%s, %s); Order puts %s (%s, %s) first",
				t0, s, rank, mine, first.ID, first.Rank, first.Key)
		}
		picks[rank]++
		x.readSeries(s, t0, rank)
		t0 += cfg.Spacing
	}
	for _, r := range []schedule.Rank{schedule.Listed, schedule.Due, schedule.Ahead} {
		if picks[r] == 0 {
			t.Errorf("no %s pick in four days: the comparison did not cover that rank (%v)", r, picks)
		}
	}
}

// candidates is the Lane's state as the store would hold it.
func (x *scheduler) candidates() []schedule.Candidate {
	out := make([]schedule.Candidate, x.st.n)
	for s := range int32(x.st.n) {
		c := schedule.Candidate{ID: fmt.Sprintf("%06d", s), Checked: at(x.readAt[s]),
			Next: at(x.nextRead[s]), Bookmarked: x.st.bookmarked[s]}
		if x.listed[s] {
			c.Listed = at(x.listedAt[s])
		}
		out[s] = c
	}
	return out
}

// picked is the key the simulation read s under.
func (x *scheduler) picked(s int32, rank schedule.Rank) time.Time {
	if rank == schedule.Listed {
		return at(x.listedAt[s])
	}
	return at(x.nextRead[s])
}
