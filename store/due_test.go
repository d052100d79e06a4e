package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/poller/schedule"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// dueOrder is the ids and ranks DueSeries answers.
func dueOrder(t *testing.T, s *store.Store, ask store.DueAsk) []string {
	t.Helper()
	due, err := s.DueSeries(context.Background(), "novelfull", ask)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(due))
	for i, d := range due {
		out[i] = fmt.Sprintf("%s:%s", d.SeriesID, schedule.Rank(d.Rank))
	}
	return out
}

// The order, one Series per rule: Forced first, then the Lane's
// Forced Poll, a Sighting, the listing, then every Series whose own time
// came (cadence before backstop by that time), and spare budget last; an
// orphan only when its backstop comes.
func TestTheLaneReadsForcedThenSightedThenListedThenDueThenAhead(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	hour := time.Hour
	row := func(id string, checked, next time.Time, bookmarks int) storetest.Series {
		return storetest.Series{Site: word.Novelfull, ID: id, URL: "https://novelfull.com/" + id + ".html",
			CheckedAt: checked, NextReadAt: next, Bookmarks: bookmarks, CreatedAt: now.Add(-30 * 24 * hour)}
	}
	forced := row("forced", now.Add(-10*time.Minute), now.Add(6*24*hour), 1)
	forced.ForcePollAt = now.Add(-time.Minute)
	sighted := row("sighted", now.Add(-10*time.Minute), now.Add(6*24*hour), 1)
	sighted.SightedAt = now.Add(-2 * time.Minute)
	listed := row("listed", now.Add(-10*time.Minute), now.Add(6*24*hour), 1)
	listed.ListedAt = now.Add(-3 * time.Minute)
	stale := row("read-before-listing", now.Add(-time.Minute), now.Add(6*24*hour), 1)
	stale.ListedAt = now.Add(-3 * time.Minute) // the read came after the listing: served
	finished := row("finished", time.Time{}, time.Time{}, 1)
	finished.FinishedAt = now.Add(-hour)
	storetest.Insert(t, pool,
		row("ahead", now.Add(-2*hour), now.Add(3*24*hour), 1),
		row("backstop-due", now.Add(-7*24*hour), now.Add(-10*time.Minute), 0),
		row("cadence-overdue", now.Add(-6*hour), now.Add(-hour), 1),
		row("never-read", time.Time{}, time.Time{}, 1),
		row("orphan-not-yet", now.Add(-2*hour), now.Add(6*24*hour), 0),
		row("read-recently", now.Add(-10*time.Minute), now.Add(3*24*hour), 1),
		forced, sighted, listed, stale, finished)

	got := dueOrder(t, s, store.DueAsk{Now: now, Floor: hour, Limit: 50})
	want := []string{"forced:forced", "sighted:sighted", "listed:listed",
		"never-read:due", "cadence-overdue:due", "backstop-due:due", "ahead:ahead"}
	if !slices.Equal(got, want) {
		t.Fatalf("order:\n got %v\nwant %v", got, want)
	}
	// The Lane's Forced Poll comes right after the Series' own: every
	// Series checked before it, in check order.
	got = dueOrder(t, s, store.DueAsk{Now: now, Floor: hour, LaneForce: now.Add(-5 * time.Minute), Limit: 4})
	want = []string{"forced:forced", "never-read:lane_forced", "backstop-due:lane_forced", "cadence-overdue:lane_forced"}
	if !slices.Equal(got, want) {
		t.Fatalf("with the Lane forced:\n got %v\nwant %v", got, want)
	}
}

// The store's due query and schedule.Order are one rule: on random Lanes,
// at every limit, the query answers Order's first rows, ranks included.
func TestTheDueQueryIsTheSchedulesOrder(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	rng := rand.New(rand.NewPCG(17, 20))
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	// A time within a week either side of now, or NULL.
	when := func(nullOdds int) time.Time {
		if rng.IntN(nullOdds) == 0 {
			return time.Time{}
		}
		return now.Add(time.Duration(rng.Int64N(int64(14*24*time.Hour))) - 7*24*time.Hour).Truncate(time.Second)
	}
	var rows []storetest.Series
	var cands []schedule.Candidate
	for i := range 300 {
		r := storetest.Series{Site: word.Novelfull, ID: fmt.Sprintf("s%03d", i), CreatedAt: now.Add(-30 * 24 * time.Hour),
			CheckedAt: when(8), ForcePollAt: when(6), SightedAt: when(5), ListedAt: when(5), NextReadAt: when(10),
			Bookmarks: rng.IntN(3)}
		r.URL = "https://novelfull.com/" + r.ID + ".html"
		if r.NextReadAt.IsZero() && !r.CheckedAt.IsZero() {
			r.NextReadAt = r.CheckedAt.Add(time.Hour) // as the fixture stores it
		}
		rows = append(rows, r)
		cands = append(cands, schedule.Candidate{ID: r.ID, Checked: r.CheckedAt, Forced: r.ForcePollAt,
			Sighted: r.SightedAt, Listed: r.ListedAt, Next: r.NextReadAt, Bookmarked: r.Bookmarks > 0})
	}
	storetest.Insert(t, pool, rows...)
	for _, ask := range []schedule.Ask{
		{Now: now, Floor: time.Hour},
		{Now: now, Floor: 24 * time.Hour, LaneForce: now.Add(-3 * 24 * time.Hour)},
		{Now: now.Add(-5 * 24 * time.Hour), Floor: time.Hour},
	} {
		order := schedule.Order(cands, ask)
		for _, limit := range []int{1, 5, 37, 1000} {
			want := make([]string, 0, limit)
			for _, p := range order[:min(limit, len(order))] {
				want = append(want, fmt.Sprintf("%s:%s", p.ID, p.Rank))
			}
			got := dueOrder(t, s, store.DueAsk{Now: ask.Now, Floor: ask.Floor, LaneForce: ask.LaneForce, Limit: limit})
			if !slices.Equal(got, want) {
				t.Fatalf("ask %+v, limit %d:\n got %v\nwant %v", ask, limit, got, want)
			}
		}
	}
}
