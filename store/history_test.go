package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// TestThePassStripCountsEachQuarterHourOfTheLastDay seeds passes of comix
// across the day and beyond it: each lands in its quarter hour with its
// Polls' outcomes, skipped and stall passes are told apart, and a pass
// older than a day, another Site's and a not-leader pass are left out.
func TestThePassStripCountsEachQuarterHourOfTheLastDay(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	storetest.Insert(t, pool,
		// The newest quarter hour: two passes that read.
		storetest.Pass{Site: word.Comix, StartedAt: t0.Add(-time.Minute), Due: 4, Checked: 4, Counts: word.Counts{OK: 3, Errors: 1}},
		storetest.Pass{Site: word.Comix, StartedAt: t0.Add(-14 * time.Minute), Due: 2, Checked: 2, Counts: word.Counts{OK: 1, Refused: 1}},
		// Five hours ago: a stall pass, and a paused one.
		storetest.Pass{Site: word.Comix, StartedAt: t0.Add(-5 * time.Hour), Due: 3},
		storetest.Pass{Site: word.Comix, StartedAt: t0.Add(-5*time.Hour - time.Minute), Skip: word.SkipPaused},
		// The oldest quarter hour of the day.
		storetest.Pass{Site: word.Comix, StartedAt: t0.Add(-24*time.Hour + time.Second), Due: 1, Checked: 1, Counts: word.Counts{NotFound: 1}},
		// Left out: older than a day, another replica declining, another Site.
		storetest.Pass{Site: word.Comix, StartedAt: t0.Add(-24 * time.Hour), Due: 1, Checked: 1, Counts: word.Counts{OK: 9}},
		storetest.Pass{Site: word.Comix, StartedAt: t0.Add(-2 * time.Minute), Skip: word.SkipNotLeader},
		storetest.Pass{Site: word.Kagane, StartedAt: t0.Add(-2 * time.Minute), Due: 1, Checked: 1, Counts: word.Counts{OK: 1}},
	)
	strip, err := s.PassStrip(context.Background(), "comix", t0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]store.PassBucket{
		95: {Passes: 2, Counts: word.Counts{OK: 4, Errors: 1, Refused: 1}},
		75: {Passes: 2, Skipped: 1, Stalled: 1},
		0:  {Passes: 1, Counts: word.Counts{NotFound: 1}},
	}
	for i, b := range strip.Buckets {
		if b != want[i] {
			t.Errorf("quarter hour %d reads %+v, want %+v", i, b, want[i])
		}
	}
	if n := strip.Buckets[95].Polls(); n != 6 {
		t.Errorf("the newest quarter hour made %d Polls, want 6", n)
	}
}

// TestTheFailingFigureIsRecordedOnceAnHourAndReadBackAsTheLine records
// comix's failing figure in two hours (twice in the first), prunes a row
// past the retention, and reads the line back summed over the Sites.
func TestTheFailingFigureIsRecordedOnceAnHourAndReadBackAsTheLine(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	ctx := context.Background()
	var series []storetest.Series
	var failures []storetest.Failure
	for i := range 3 {
		id := fmt.Sprintf("f%d", i)
		series = append(series, storetest.Series{Site: word.Comix, ID: id, URL: "https://comix.to/title/" + id, LatestChapter: "5", CheckedAt: t0})
		// Two have failed for longer than ownerWindow; one only for an hour.
		since := t0.Add(-13 * time.Hour)
		if i == 2 {
			since = t0.Add(-time.Hour)
		}
		failures = append(failures, storetest.Failure{Site: word.Comix, Series: id, Outcome: word.Errors, FailingSince: since})
	}
	storetest.Insert(t, pool, series...)
	storetest.Insert(t, pool, failures...)
	storetest.Insert(t, pool,
		storetest.FailingCount{Site: word.Comix, At: t0.Add(-9 * 24 * time.Hour), Failing: 7},     // past retention
		storetest.FailingCount{Site: word.Kagane, At: t0.Add(-9 * 24 * time.Hour), Failing: 7},    // another Site's: kept
		storetest.FailingCount{Site: word.Kagane, At: t0.Add(-6 * 24 * time.Hour), Failing: 1001}, // above the cap
		storetest.FailingCount{Site: word.Kagane, At: t0.Add(-time.Hour), Failing: 1},
	)
	at := t0.Add(20 * time.Minute) // 12:20: the hour is 12:00
	for i, want := range []bool{true, false} {
		wrote, err := s.RecordFailing(ctx, "comix", at.Add(time.Duration(i)*30*time.Minute))
		if err != nil || wrote != want {
			t.Fatalf("record %d in one hour: wrote %v, %v; want %v", i+1, wrote, err, want)
		}
	}
	if wrote, err := s.RecordFailing(ctx, "comix", at.Add(time.Hour)); err != nil || !wrote {
		t.Fatalf("the next hour: wrote %v, %v", wrote, err)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM failing_history WHERE site = 'comix'`).Scan(&rows); err != nil || rows != 2 {
		t.Fatalf("comix holds %d rows (%v), want its two hours: the row past retention went", rows, err)
	}
	line, err := s.FailingHistory(ctx, at.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []store.FailingPoint{
		{At: t0.Add(-6 * 24 * time.Hour), Failing: 1001, Capped: true},
		{At: t0.Add(-time.Hour), Failing: 1},
		{At: t0, Failing: 2},
		{At: t0.Add(time.Hour), Failing: 2},
	}
	if len(line) != len(want) {
		t.Fatalf("the line reads %+v, want %+v", line, want)
	}
	for i := range want {
		if !line[i].At.Equal(want[i].At) || line[i].Failing != want[i].Failing || line[i].Capped != want[i].Capped {
			t.Errorf("point %d reads %+v, want %+v", i, line[i], want[i])
		}
	}
}
