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

// landing reads /admin's one statement of figures at now.
func landing(t *testing.T, s *store.Store, now time.Time) store.LandingFigures {
	t.Helper()
	var v store.LandingFigures
	b := s.NewBatch()
	b.Landing(now, &v)
	if err := s.Send(context.Background(), b); err != nil || !v.Read {
		t.Fatalf("landing: %v (read %v)", err, v.Read)
	}
	return v
}

// TestTheLandingReadsEveryFigureInOneStatement: the figures, the young
// failures, the freshness figure and the failing line with the hour its
// records begin arrive in one statement, each as its own read says.
func TestTheLandingReadsEveryFigureInOneStatement(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	hour := t0.Truncate(time.Hour)
	storetest.Insert(t, pool,
		storetest.Series{Site: word.Comix, ID: "a", URL: "https://comix.to/title/a", CheckedAt: t0.Add(-time.Hour)},
		storetest.Series{Site: word.Comix, ID: "b", URL: "https://comix.to/title/b"},
	)
	storetest.Insert(t, pool,
		storetest.Failure{Site: word.Comix, Series: "a", Outcome: word.Errors, FailingSince: t0.Add(-time.Hour)})
	listed := arrival(word.Comix, "b", 20*time.Minute, 3*time.Minute)
	listed.Listed = true
	storetest.Insert(t, pool, arrival(word.Comix, "a", 5*time.Minute, time.Minute), listed)
	// comix's newest pass reached nothing: its Lane's reach (poll_lanes,
	// kept by the pass log's trigger) arrives with the figures.
	storetest.Insert(t, pool, storetest.Pass{Site: word.Comix, StartedAt: t0.Add(-time.Minute), Due: 2, Counts: word.Counts{Unreachable: 2}})
	storetest.Insert(t, pool,
		storetest.FailingCount{Site: word.Kagane, At: hour.Add(-9 * 24 * time.Hour), Failing: 7},
		storetest.FailingCount{Site: word.Comix, At: hour.Add(-2 * time.Hour), Failing: 1001},
		storetest.FailingCount{Site: word.Kagane, At: hour.Add(-2 * time.Hour), Failing: 2},
		storetest.FailingCount{Site: word.Comix, At: hour.Add(-time.Hour), Failing: 3},
	)
	v := landing(t, s, t0)
	if v.Stats[store.FilterAll] != 2 || v.Stats[store.FilterNeverChecked] != 1 {
		t.Errorf("the figures read %v", v.Stats)
	}
	if v.Young.Series != 1 {
		t.Errorf("the young failures read %+v, want 1", v.Young)
	}
	var unreached []string
	for _, l := range v.Young.Lanes {
		if !l.UnreachedSince.IsZero() {
			unreached = append(unreached, l.Site+" since "+l.UnreachedSince.Sub(t0).String())
		}
	}
	if len(v.Young.Lanes) != len(word.SiteNames()) || fmt.Sprint(unreached) != "[comix since -1m0s]" {
		t.Errorf("the Lanes' reach reads %+v, want every Lane, comix unreached since a minute ago", v.Young.Lanes)
	}
	if want := (store.Delays{N: 2, Median: 2 * time.Minute, P95: 174 * time.Second, Unlisted: 1}); v.Fresh != want {
		t.Errorf("the freshness figure reads %+v, want %+v", v.Fresh, want)
	}
	want := []store.FailingPoint{{At: hour.Add(-2 * time.Hour), Failing: 1003, Capped: true}, {At: hour.Add(-time.Hour), Failing: 3}}
	if len(v.Failing.Points) != 2 || v.Failing.Points[0].Failing != want[0].Failing || !v.Failing.Points[0].Capped ||
		!v.Failing.Points[0].At.Equal(want[0].At) || v.Failing.Points[1].Failing != 3 || v.Failing.Points[1].Capped {
		t.Errorf("the failing line reads %+v, want %+v", v.Failing.Points, want)
	}
	if !v.Failing.First.Equal(hour.Add(-9 * 24 * time.Hour)) {
		t.Errorf("the records begin at %v, want the first row's hour", v.Failing.First)
	}
	empty := landing(t, store.New(storetest.Pool(t, nil)), t0)
	if len(empty.Failing.Points) != 0 || !empty.Failing.First.IsZero() || empty.Fresh != (store.Delays{}) {
		t.Errorf("a fresh server's landing reads %+v", empty)
	}
}

// TestTheLanesKeepTheFreshnessFigureAndThePageReadsTheirCopy: a Lane's
// refresh computes the figure a minute apart at most, and once only
// whoever asks; /admin reads the kept copy while it is younger than
// FreshnessFigureStale (the day's Arrivals never read, EXPLAIN ANALYZE),
// and computes the figure itself once no Lane has kept it for that long.
func TestTheLanesKeepTheFreshnessFigureAndThePageReadsTheirCopy(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	ctx := context.Background()
	storetest.Insert(t, pool, storetest.Series{Site: word.Comix, ID: "a", URL: "https://comix.to/title/a"})
	listed := arrival(word.Comix, "a", 10*time.Minute, 3*time.Minute)
	listed.Chapter, listed.Listed = "2", true
	storetest.Insert(t, pool, arrival(word.Comix, "a", 5*time.Minute, time.Minute), listed)
	if done, err := s.RefreshFreshnessFigure(ctx, t0); err != nil || !done {
		t.Fatalf("the first refresh: %v %v", done, err)
	}
	if done, err := s.RefreshFreshnessFigure(ctx, t0.Add(30*time.Second)); err != nil || done {
		t.Fatalf("a refresh 30 s later recomputed: %v %v", done, err)
	}
	kept := store.Delays{N: 2, Median: 2 * time.Minute, P95: 174 * time.Second, Unlisted: 1}
	// A chapter confirmed since: the page reads the copy until it is stale.
	storetest.Insert(t, pool, arrival(word.Comix, "a", -time.Minute, 10*time.Minute))
	if v := landing(t, s, t0.Add(2*time.Minute)); v.Fresh != kept {
		t.Errorf("the page read %+v, want the kept %+v", v.Fresh, kept)
	}
	live, err := s.FreshnessAll(ctx, t0.Add(6*time.Minute))
	if err != nil || live.N != 3 || live.Unlisted != 2 {
		t.Fatalf("the live figure: %+v %v", live, err)
	}
	if v := landing(t, s, t0.Add(6*time.Minute)); v.Fresh != live {
		t.Errorf("no Lane kept the figure for 6 minutes: the page read %+v, want the live %+v", v.Fresh, live)
	}
	if done, err := s.RefreshFreshnessFigure(ctx, t0.Add(2*time.Minute)); err != nil || !done {
		t.Fatalf("a refresh 2 minutes later: %v %v", done, err)
	}
	if v := landing(t, s, t0.Add(3*time.Minute)); v.Fresh.N != 3 {
		t.Errorf("after the refresh the page read %+v", v.Fresh)
	}

	// While the copy is kept, neither the page nor a refresh not yet due
	// reads an Arrival.
	explain := func(sql string, args ...any) string {
		rows, err := pool.Query(ctx, "EXPLAIN (ANALYZE) "+sql, args...)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	b := s.NewBatch()
	b.Landing(t0.Add(3*time.Minute), &store.LandingFigures{})
	q := store.QueuedStatements(b)[0]
	for name, plan := range map[string]string{
		"the page":              explain(q.SQL, q.Args...),
		"a refresh not yet due": explain(store.RefreshFreshnessSQL, pgx.NamedArgs{"due": t0.Add(2 * time.Minute).Add(-store.FreshnessFigureEvery), "now": t0.Add(2 * time.Minute), "window": store.FreshnessWindow}),
	} {
		for _, l := range strings.Split(plan, "\n") {
			if strings.Contains(l, "chapter_arrivals") && !strings.Contains(l, "never executed") {
				t.Errorf("%s reads the Arrivals: %s\n%s", name, l, plan)
			}
		}
	}
}
