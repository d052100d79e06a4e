package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// arrival is one chapter_arrivals row of a Series, confirmed ago before t0 after
// waiting delay since its first evidence.
func arrival(site word.Site, series string, ago, delay time.Duration) storetest.Arrival {
	return storetest.Arrival{Site: site, Series: series, ConfirmedAt: t0.Add(-ago), NoticedAt: t0.Add(-ago - delay)}
}

func TestFreshnessReadsTheLastDaysDelaysByHourAndTheOldestCheck(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	ctx := context.Background()
	storetest.Insert(t, pool,
		storetest.Series{Site: word.Comix, ID: "a", URL: "https://comix.to/title/a", CheckedAt: t0.Add(-3 * time.Hour)},
		storetest.Series{Site: word.Comix, ID: "b", URL: "https://comix.to/title/b", CheckedAt: t0.Add(-10 * time.Minute)},
		// Neither a Finished Series nor one without an address is read by a
		// Lane, so neither is the oldest read.
		storetest.Series{Site: word.Comix, ID: "done", URL: "https://comix.to/title/done", CheckedAt: t0.Add(-90 * 24 * time.Hour), FinishedAt: t0.Add(-time.Hour)},
		storetest.Series{Site: word.Comix, ID: "nourl", CheckedAt: t0.Add(-90 * 24 * time.Hour)},
		storetest.Series{Site: word.Kagane, ID: "k", URL: "https://kagane.org/series/k"},
	)
	storetest.Insert(t, pool,
		// The last hour: 60 s, 120 s and 600 s.
		arrival(word.Comix, "a", 5*time.Minute, time.Minute),
		arrival(word.Comix, "b", 20*time.Minute, 2*time.Minute),
		arrival(word.Comix, "a", 59*time.Minute, 10*time.Minute),
		// Five hours ago, one chapter noticed after its confirmation
		// (replicas' clocks): no delay, never a negative one.
		storetest.Arrival{Site: word.Comix, Series: "b", ConfirmedAt: t0.Add(-5*time.Hour - time.Minute), NoticedAt: t0.Add(-5 * time.Hour)},
		// Outside the window, and another Site's.
		arrival(word.Comix, "a", 24*time.Hour+time.Second, time.Hour),
		arrival(word.Kagane, "k", time.Hour, 3*time.Hour),
	)
	f, err := s.Freshness(ctx, "comix", t0)
	if err != nil {
		t.Fatal(err)
	}
	// Four delays 0, 60, 120, 600: median 90 s, p95 0.85 of the way from
	// 120 to 600 (percentile_cont at position 2.85).
	if want := (store.Delays{N: 4, Median: 90 * time.Second, P95: 528 * time.Second}); f.Delays != want {
		t.Errorf("the window's delays are %+v, want %+v", f.Delays, want)
	}
	if want := (store.Delays{N: 3, Median: 2 * time.Minute, P95: 552 * time.Second}); f.Hours[23] != want {
		t.Errorf("the last hour is %+v, want %+v", f.Hours[23], want)
	}
	if want := (store.Delays{N: 1}); f.Hours[18] != want {
		t.Errorf("the hour five hours back is %+v, want %+v", f.Hours[18], want)
	}
	for i, h := range f.Hours {
		if i != 23 && i != 18 && h != (store.Delays{}) {
			t.Errorf("hour %d holds %+v, want nothing", i, h)
		}
	}
	if !f.Pollable || f.NeverChecked() || !f.OldestCheck.Equal(t0.Add(-3*time.Hour)) {
		t.Errorf("oldest read %v (pollable %v), want three hours before t0", f.OldestCheck, f.Pollable)
	}

	k, err := s.Freshness(ctx, "kagane", t0)
	if err != nil {
		t.Fatal(err)
	}
	if k.N != 1 || k.Median != 3*time.Hour || !k.NeverChecked() {
		t.Errorf("kagane: %+v, want one 3-hour delay and a Series never read", k)
	}
	all, err := s.FreshnessAll(ctx, t0)
	if err != nil {
		t.Fatal(err)
	}
	if all.N != 5 || all.Median != 2*time.Minute {
		t.Errorf("every Site: %+v, want 5 chapters with a 2-minute median", all)
	}
}

func TestFreshnessOfASiteWithNothingSaysSo(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	ctx := context.Background()
	storetest.Insert(t, pool, storetest.Series{Site: word.Comix, ID: "done", URL: "https://comix.to/title/done", FinishedAt: t0})
	f, err := s.Freshness(ctx, "comix", t0)
	if err != nil {
		t.Fatal(err)
	}
	if f != (store.Freshness{}) {
		t.Errorf("a Site with no Arrival and no pollable Series reads %+v, want the zero Freshness", f)
	}
	all, err := s.FreshnessAll(ctx, t0)
	if err != nil {
		t.Fatal(err)
	}
	if all != (store.Delays{}) {
		t.Errorf("no Arrival anywhere reads %+v", all)
	}
}

// TestTheFreshnessReadsUseTheirIndexes plans the freshness statements over
// a month of Arrivals on 6,000 Series: each reads its index's range of the
// last day, and neither scans series nor chapter_arrivals.
func TestTheFreshnessReadsUseTheirIndexes(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 60 000 Arrivals")
	}
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	ctx := context.Background()
	var series []storetest.Series
	for i := range 6000 {
		series = append(series, storetest.Series{Site: word.Sites[i%6], ID: fmt.Sprintf("s%05d", i),
			URL: fmt.Sprintf("https://example.test/%d", i), CheckedAt: t0.Add(-time.Duration(i) * time.Minute)})
	}
	storetest.Insert(t, pool, series...)
	var arrivals []storetest.Arrival
	for i := range 60000 {
		r := series[i%len(series)]
		arrivals = append(arrivals, arrival(r.Site, r.ID, time.Duration(i)*43*time.Second, time.Duration(i%900)*time.Second))
	}
	storetest.Insert(t, pool, arrivals...)
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		t.Fatal(err)
	}
	one, lanes, all := s.NewBatch(), s.NewBatch(), s.NewBatch()
	one.Freshness([]string{"comix"}, t0, map[string]store.Freshness{})
	lanes.Freshness(word.SiteNames(), t0, map[string]store.Freshness{})
	all.FreshnessAll(t0, &store.Delays{})
	// Either Arrivals index reads the last day only; each oldest read is
	// one probe.
	needs := []string{"confirmed on chapter_arrivals", "series_due", "confirmed on chapter_arrivals", "series_due",
		"confirmed on chapter_arrivals"}
	var got []store.Queued
	for _, b := range []*store.Batch{one, lanes, all} {
		got = append(got, store.QueuedStatements(b)...)
	}
	if len(got) != len(needs) {
		t.Fatalf("%d statements, want %d", len(got), len(needs))
	}
	for i, q := range got {
		rows, err := pool.Query(ctx, "EXPLAIN "+q.SQL, q.Args...)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		if !strings.Contains(plan, needs[i]) || strings.Contains(plan, "Seq Scan") {
			t.Errorf("statement %d reads without %s or scans a table:\n%s", i, needs[i], plan)
		}
	}
}
