package store_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// The check and failure ages the figures' seeds use.
var figureOld, figureFresh = t0.Add(-30 * 24 * time.Hour), t0.Add(-10 * time.Minute)

// departure is how a generated Series i departs from a healthy one to fall
// in a filter: its row, the word of its failure row ("" for none), and
// whether it goes without a Bookmark.
type departure struct {
	series  func(i int, r *storetest.Series)
	failure func(i int) word.Outcome
	orphan  bool
}

func always(o word.Outcome) func(int) word.Outcome { return func(int) word.Outcome { return o } }

// inFilter is, per filter, how a generated Series departs from a healthy
// one to fall in it. A healthy Series is checked ten minutes ago, has an
// address and a chapter, no failure row and a Bookmark: it is in no filter
// but "every Series".
var inFilter = map[store.Filter]departure{
	store.FilterAll:          {},
	store.FilterNeverChecked: {series: func(_ int, r *storetest.Series) { r.CheckedAt = time.Time{} }},
	store.FilterStale:        {series: func(_ int, r *storetest.Series) { r.CheckedAt = figureOld }},
	// Both arms: no address, and an address the fetch gate refused.
	store.FilterUnpollable: {
		series: func(i int, r *storetest.Series) {
			if i%2 == 0 {
				r.URL = ""
			}
		},
		failure: func(i int) word.Outcome {
			if i%2 == 1 {
				return word.Unfetchable
			}
			return ""
		},
	},
	// A Poll reached the page and read no chapter: the failure row says so
	// (without it the Series is never read: CONTEXT.md).
	store.FilterNoChapter:     {series: func(_ int, r *storetest.Series) { r.LatestChapter = "" }, failure: always(word.NoChapter)},
	store.FilterFailing:       {failure: always(word.Errors)},
	store.FilterUnverified:    {series: func(_ int, r *storetest.Series) { r.RaisedBy = "r1" }, failure: always(word.NotFound)},
	store.FilterSiteCompleted: {series: func(_ int, r *storetest.Series) { r.CompletedAt = figureFresh }},
	store.FilterFinished:      {series: func(_ int, r *storetest.Series) { r.FinishedAt = figureFresh }},
	store.FilterOrphan:        {orphan: true},
}

// seedInFilter adds n Series of site in filter f (and, but for "every
// Series", seven healthy ones beside them), writing failure rows through
// poll_failures as the Poll does.
func seedInFilter(t *testing.T, s *store.Store, f store.Filter, site word.Site, n int) {
	t.Helper()
	d := inFilter[f]
	healthy := 7
	if f == store.FilterAll {
		healthy = 0
	}
	pool := s.Pool()
	storetest.Ensure(t, pool, storetest.Reader{ID: "r1", Name: "Reader One"})
	var series []storetest.Series
	var failures []storetest.Failure
	var bookmarks []storetest.Bookmark
	for i := 1; i <= n; i++ {
		r := storetest.Series{Site: site, ID: "f" + strconv.Itoa(i), URL: "https://example.test/" + strconv.Itoa(i),
			Kind: "manga", LatestChapter: "5", CheckedAt: figureFresh}
		if d.series != nil {
			d.series(i, &r)
		}
		series = append(series, r)
		if d.failure != nil {
			if o := d.failure(i); o != "" {
				failures = append(failures, storetest.Failure{Site: site, Series: r.ID, Outcome: o, FailingSince: figureOld})
			}
		}
		if !d.orphan {
			bookmarks = append(bookmarks, storetest.Bookmark{Reader: "r1", Site: site, Series: r.ID})
		}
	}
	storetest.Insert(t, pool, series...)
	series = nil
	for i := 1; i <= healthy; i++ {
		r := storetest.Series{Site: site, ID: "h" + strconv.Itoa(i), URL: "https://example.test/h" + strconv.Itoa(i),
			Kind: "manga", LatestChapter: "5", CheckedAt: figureFresh}
		series = append(series, r)
		bookmarks = append(bookmarks, storetest.Bookmark{Reader: "r1", Site: site, Series: r.ID})
	}
	storetest.Insert(t, pool, series...)
	storetest.Insert(t, pool, failures...)
	storetest.Insert(t, pool, bookmarks...)
}

// TestEachFigureIsExactUpToTheCapAndSaysMoreAbove puts 999, 1000 and 1001
// Series in each filter: the landing figure and the list's caption count
// (also with the Site and the kind stacked) read 999 and 1000 exactly and
// FigureCap+1, "more", at 1001 — and both always say the same.
func TestEachFigureIsExactUpToTheCapAndSaysMoreAbove(t *testing.T) {
	t.Parallel()
	for _, f := range store.Filters {
		for _, n := range []int{store.FigureCap - 1, store.FigureCap, store.FigureCap + 1} {
			t.Run(fmt.Sprintf("%s/%d", f, n), func(t *testing.T) {
				t.Parallel()
				s := storetest.New(t)
				ctx := context.Background()
				seedInFilter(t, s, f, "kagane", n)
				want := int64(n)
				stats, err := s.AdminStats(ctx, t0)
				if err != nil {
					t.Fatal(err)
				}
				if stats[f] != want {
					t.Errorf("landing figure %d, want %d", stats[f], want)
				}
				for _, q := range []store.SeriesQuery{{Filter: f}, {Filter: f, Site: "kagane"}, {Filter: f, Kind: "manga"}, {Filter: f, Site: "kagane", Kind: "manga"}} {
					got, err := s.CountAdminSeries(ctx, q, t0)
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Errorf("caption count of %+v: %d, want %d", q, got, want)
					}
				}
				for _, q := range []store.SeriesQuery{{Filter: f, Site: "comix"}, {Filter: f, Kind: "novel"}, {Filter: f, Site: "kagane", Kind: "novel"}} {
					if got, err := s.CountAdminSeries(ctx, q, t0); err != nil || got != 0 {
						t.Errorf("caption count of %+v: %d (%v), want 0", q, got, err)
					}
				}
			})
		}
	}
}

// talliesAgree compares migration 0009's kept copies with a recount: each
// Site's tally, and each Series' copy of its failure row.
func talliesAgree(t *testing.T, s *store.Store, step string) {
	t.Helper()
	var bad int
	err := s.Pool().QueryRow(context.Background(), `
	WITH real AS (
	    SELECT site, count(*) FILTER (WHERE finished_at IS NULL AND url <> '') AS pollable,
	           count(*) FILTER (WHERE finished_at IS NULL AND url <> '' AND failure_outcome = 'no_chapter') AS no_chapter
	      FROM series GROUP BY site)
	SELECT (SELECT count(*) FROM real FULL JOIN site_tallies t USING (site)
	         WHERE coalesce(real.pollable, 0) <> coalesce(t.pollable, 0)
	            OR coalesce(real.no_chapter, 0) <> coalesce(t.no_chapter, 0))
	     + (SELECT count(*) FROM series s LEFT JOIN poll_failures f USING (site, series_id)
	         WHERE s.failure_outcome <> coalesce(f.outcome, '') OR s.failing_since IS DISTINCT FROM f.failing_since)`).Scan(&bad)
	if err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Errorf("after %s: %d tallies or copies disagree with a recount", step, bad)
	}
}

// TestTheTalliesAndCopiesStayInStepWithEveryWrite walks one Site through
// every write that moves a Series in or out of the adapter-broken share or
// changes its failure row, checking after each that the tally and the copy
// equal a recount.
func TestTheTalliesAndCopiesStayInStepWithEveryWrite(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	ms := t0.UnixMilli()
	must := func(step string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		talliesAgree(t, s, step)
	}
	exec := func(step, sql string) {
		t.Helper()
		_, err := s.Pool().Exec(ctx, sql)
		must(step, err)
	}
	for _, id := range []string{"a", "b", "c"} {
		must("create "+id, s.CreateSeries(ctx, store.Series{Site: "novelfull", SeriesID: id, URL: "https://novelfull.com/" + id + ".html", Kind: "novel"}, storetest.Milli(ms)))
	}
	var bulk []storetest.Series
	for i := 1; i <= 200; i++ {
		r := storetest.Series{Site: word.Novelfull, ID: "bulk" + strconv.Itoa(i), URL: "https://x/" + strconv.Itoa(i), Kind: word.Manga}
		if i%2 == 0 {
			r.Site = word.Comix
		}
		if i%5 == 0 {
			r.URL = ""
		}
		bulk = append(bulk, r)
	}
	storetest.Insert(t, s.Pool(), bulk...) // one statement, as a bulk import is
	talliesAgree(t, s, "a bulk import")
	must("a no_chapter failure", s.RecordFailure(ctx, "novelfull", "a", "no_chapter", storetest.Milli(ms)))
	must("the same failure again", s.RecordFailure(ctx, "novelfull", "a", "no_chapter", storetest.Milli(ms+1)))
	must("the word changes", s.RecordFailure(ctx, "novelfull", "a", "not_found", storetest.Milli(ms+2)))
	must("and changes back", s.RecordFailure(ctx, "novelfull", "a", "no_chapter", storetest.Milli(ms+3)))
	must("another no_chapter", s.RecordFailure(ctx, "novelfull", "b", "no_chapter", storetest.Milli(ms)))
	must("finish a failing Series", s.FinishSeries(ctx, "novelfull", "b", storetest.Milli(ms)))
	must("un-finish it", s.UnfinishSeries(ctx, "novelfull", "b"))
	exec("its address goes", `UPDATE series SET url = '' WHERE site = 'novelfull' AND series_id = 'b'`)
	exec("and comes back", `UPDATE series SET url = 'https://novelfull.com/b.html' WHERE site = 'novelfull' AND series_id = 'b'`)
	var bulkFailures []storetest.Failure
	for _, r := range bulk {
		f := storetest.Failure{Site: r.Site, Series: r.ID, Outcome: word.NoChapter, FailingSince: storetest.Milli(5)}
		if strings.HasSuffix(r.ID, "1") {
			f.Outcome = word.Errors
		}
		bulkFailures = append(bulkFailures, f)
	}
	storetest.Insert(t, s.Pool(), bulkFailures...) // one statement
	talliesAgree(t, s, "bulk failures")
	must("a correct read", s.ApplyRead(ctx, "novelfull", "a", store.ReadChanges{ClearFailure: true}))
	storetest.Ensure(t, s.Pool(), storetest.Reader{ID: "r1", Name: "Reader One"})
	storetest.Insert(t, s.Pool(), storetest.Bookmark{Reader: "r1", Site: word.Novelfull, Series: "bulk3", Progress: "1", UpdatedAt: t0})
	_, err := s.RemoveSeries(ctx, "novelfull", "bulk3", "Bulk Three", t0)
	must("a bookmarked Series with a failure row is removed (issue 24, item 1)", err)
	exec("a Series with a failure row is deleted", `DELETE FROM series WHERE site = 'novelfull' AND series_id = 'b'`)
	exec("a bulk delete", `DELETE FROM series WHERE series_id LIKE 'bulk1%'`)
	exec("a bulk finish", `UPDATE series SET finished_at = timestamptz 'epoch' + interval '9 milliseconds' WHERE series_id LIKE 'bulk2%'`)
	exec("check stamps", `UPDATE series SET checked_at = coalesce(checked_at, timestamptz 'epoch') + interval '1 millisecond'`)

	var pollable, noChapter int64
	if err := s.Pool().QueryRow(ctx, `SELECT pollable, no_chapter FROM site_tallies WHERE site = 'novelfull'`).Scan(&pollable, &noChapter); err != nil || pollable == 0 || noChapter == 0 {
		t.Fatalf("the walk should leave novelfull with pollable and no_chapter Series: %d, %d, %v", pollable, noChapter, err)
	}
}

// TestYoungFailuresCountsOnlyRunsUnderTheWindow: the verdict's "too early to
// tell" counts a Series whose failures began less than ownerWindow ago,
// with or without a chapter ever read, and not one failing longer, a
// Finished one, or one with no failure row (issue 23, item 1).
func TestYoungFailuresCountsOnlyRunsUnderTheWindow(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	pool := s.Pool()
	mk := func(id, chapter string) storetest.Series {
		return storetest.Series{Site: word.Asurascans, ID: id, URL: "https://asurascans.com/comics/" + id, Kind: "manga",
			LatestChapter: chapter, CheckedAt: figureFresh}
	}
	finished := mk("young-finished", "5")
	finished.FinishedAt = figureFresh
	storetest.Insert(t, pool, mk("young-never-read", ""), mk("young-read", "5"),
		mk("old", "5"), mk("healthy", "5"), finished)
	storetest.Insert(t, pool,
		storetest.Failure{Site: word.Asurascans, Series: "young-never-read", Outcome: word.Errors, FailingSince: t0.Add(-time.Minute)},
		storetest.Failure{Site: word.Asurascans, Series: "young-read", Outcome: word.NotFound, FailingSince: t0.Add(-11 * time.Hour)},
		storetest.Failure{Site: word.Asurascans, Series: "old", Outcome: word.Errors, FailingSince: t0.Add(-13 * time.Hour)},
		storetest.Failure{Site: word.Asurascans, Series: "young-finished", Outcome: word.Errors, FailingSince: t0.Add(-time.Hour)})
	// novelfull's newest pass reached nothing; asurascans' older one did
	// not matter once a later pass read a page.
	storetest.Insert(t, pool,
		storetest.Pass{Site: word.Novelfull, StartedAt: t0.Add(-time.Hour), Due: 2, Counts: word.Counts{OK: 2}},
		storetest.Pass{Site: word.Novelfull, StartedAt: t0.Add(-time.Minute), Due: 2, Counts: word.Counts{Unreachable: 2}},
		storetest.Pass{Site: word.Asurascans, StartedAt: t0.Add(-time.Hour), Due: 2, Counts: word.Counts{Unreachable: 2}},
		storetest.Pass{Site: word.Asurascans, StartedAt: t0.Add(-time.Minute), Due: 2, Checked: 1, Counts: word.Counts{OK: 1, Unreachable: 1}})
	var y store.Young
	b := s.NewBatch()
	b.Young(t0, &y)
	if err := s.Send(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if y.Series != 2 {
		t.Errorf("young failures: %d, want 2 (young-never-read, young-read)", y.Series)
	}
	var unreached []string
	for _, l := range y.Lanes {
		if !l.UnreachedSince.IsZero() {
			unreached = append(unreached, l.Site+" since "+l.UnreachedSince.Sub(t0).String())
		}
	}
	if fmt.Sprint(unreached) != "[novelfull since -1m0s]" {
		t.Errorf("Sites whose newest pass reached nothing: %v, want [novelfull since -1m0s]", unreached)
	}
}
