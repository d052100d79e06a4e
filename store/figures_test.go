package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// inFilter is, per filter, how a generated Series (row i of generate_series)
// departs from a healthy one to fall in it. A healthy Series is checked ten
// minutes ago, has an address and a chapter, no failure row and a Bookmark:
// it is in no filter but "every Series".
var inFilter = map[store.Filter]struct{ url, chapter, raised, checked, finished, completed, failure, bookmark string }{
	store.FilterAll:          {},
	store.FilterNeverChecked: {checked: "0::bigint"},
	store.FilterStale:        {checked: "@old::bigint"},
	// Both arms: no address, and an address the fetch gate refused.
	store.FilterUnpollable:    {url: "CASE WHEN i % 2 = 0 THEN '' END", failure: "CASE WHEN i % 2 = 1 THEN 'unfetchable' END"},
	store.FilterNoChapter:     {chapter: "NULL"},
	store.FilterFailing:       {failure: "'errors'"},
	store.FilterUnverified:    {failure: "'not_found'", raised: "'r1'"},
	store.FilterSiteCompleted: {completed: "@fresh::bigint"},
	store.FilterFinished:      {finished: "@fresh::bigint"},
	store.FilterOrphan:        {bookmark: "false"},
}

// seedInFilter adds n Series of site in filter f (and, but for "every
// Series", seven healthy ones beside them), writing failure rows through
// poll_failures as the Poll does.
func seedInFilter(t *testing.T, s *store.Store, f store.Filter, site string, n int) {
	t.Helper()
	d := inFilter[f]
	or := func(v, def string) string {
		if v == "" {
			return def
		}
		return "coalesce(" + v + ", " + def + ")"
	}
	if d.chapter == "NULL" {
		d.chapter = "NULL::numeric"
	}
	healthy := 7
	if f == store.FilterAll {
		healthy = 0
	}
	ctx := context.Background()
	pool := s.Pool()
	args := pgx.NamedArgs{"old": t0.Add(-30 * 24 * time.Hour).UnixMilli(), "fresh": t0.Add(-10 * time.Minute).UnixMilli(), "n": n, "healthy": healthy, "site": site}
	chapter := "5::numeric"
	if d.chapter != "" {
		chapter = d.chapter
	}
	stmts := []string{
		`INSERT INTO readers (discord_id, name, created_at) VALUES ('r1', 'Reader One', 0) ON CONFLICT DO NOTHING`,
		(fmt.Sprintf(`INSERT INTO series (site, series_id, url, kind, latest_chapter_num, latest_raised_by,
			checked_at, finished_at, site_completed_at, created_at)
		SELECT @site, 'f' || i, %s, 'manga', %s, %s, %s, %s, %s, 0 FROM generate_series(1, @n::int) i`,
			or(d.url, "'https://example.test/' || i"), chapter, or(d.raised, "NULL"), or(d.checked, "@fresh::bigint"),
			or(d.finished, "0"), or(d.completed, "0"))),
		`INSERT INTO series (site, series_id, url, kind, latest_chapter_num, checked_at, created_at)
		SELECT @site, 'h' || i, 'https://example.test/h' || i, 'manga', 5, @fresh::bigint, 0 FROM generate_series(1, @healthy::int) i`,
	}
	if d.failure != "" {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO poll_failures (site, series_id, outcome, failing_since)
		SELECT @site, 'f' || i, %s, @old::bigint FROM generate_series(1, @n::int) i WHERE %s IS NOT NULL`, d.failure, d.failure))
	}
	if d.bookmark != "false" {
		stmts = append(stmts, `INSERT INTO bookmarks (reader_id, site, series_id, created_at, updated_at)
		SELECT 'r1', site, series_id, 0, 0 FROM series`)
	} else {
		stmts = append(stmts, `INSERT INTO bookmarks (reader_id, site, series_id, created_at, updated_at)
		SELECT 'r1', site, series_id, 0, 0 FROM series WHERE series_id LIKE 'h%'`)
	}
	for _, q := range stmts {
		if _, err := pool.Exec(ctx, q, args); err != nil {
			t.Fatalf("seed %s: %v\n%s", f, err, q)
		}
	}
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
	    SELECT site, count(*) FILTER (WHERE finished_at = 0 AND url <> '') AS pollable,
	           count(*) FILTER (WHERE finished_at = 0 AND url <> '' AND failure_outcome = 'no_chapter') AS no_chapter
	      FROM series GROUP BY site)
	SELECT (SELECT count(*) FROM real FULL JOIN site_tallies t USING (site)
	         WHERE coalesce(real.pollable, 0) <> coalesce(t.pollable, 0)
	            OR coalesce(real.no_chapter, 0) <> coalesce(t.no_chapter, 0))
	     + (SELECT count(*) FROM series s LEFT JOIN poll_failures f USING (site, series_id)
	         WHERE s.failure_outcome <> coalesce(f.outcome, '') OR s.failing_since <> coalesce(f.failing_since, 0))`).Scan(&bad)
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
		must("create "+id, s.CreateSeries(ctx, store.Series{Site: "novelfull", SeriesID: id, URL: "https://novelfull.com/" + id + ".html", Kind: "novel"}, msT(ms)))
	}
	exec("a bulk import", `INSERT INTO series (site, series_id, url, kind, created_at)
		SELECT (ARRAY['comix','novelfull'])[1 + i % 2], 'bulk' || i, CASE WHEN i % 5 = 0 THEN '' ELSE 'https://x/' || i END, 'manga', 0
		  FROM generate_series(1, 200) i`)
	must("a no_chapter failure", s.RecordFailure(ctx, "novelfull", "a", "no_chapter", msT(ms)))
	must("the same failure again", s.RecordFailure(ctx, "novelfull", "a", "no_chapter", msT(ms+1)))
	must("the word changes", s.RecordFailure(ctx, "novelfull", "a", "not_found", msT(ms+2)))
	must("and changes back", s.RecordFailure(ctx, "novelfull", "a", "no_chapter", msT(ms+3)))
	must("another no_chapter", s.RecordFailure(ctx, "novelfull", "b", "no_chapter", msT(ms)))
	must("finish a failing Series", s.FinishSeries(ctx, "novelfull", "b", msT(ms)))
	must("un-finish it", s.UnfinishSeries(ctx, "novelfull", "b"))
	exec("its address goes", `UPDATE series SET url = '' WHERE site = 'novelfull' AND series_id = 'b'`)
	exec("and comes back", `UPDATE series SET url = 'https://novelfull.com/b.html' WHERE site = 'novelfull' AND series_id = 'b'`)
	exec("bulk failures", `INSERT INTO poll_failures (site, series_id, outcome, failing_since)
		SELECT site, series_id, CASE WHEN series_id LIKE '%1' THEN 'errors' ELSE 'no_chapter' END, 5 FROM series WHERE series_id LIKE 'bulk%'`)
	must("a correct read", s.ApplyRead(ctx, "novelfull", "a", store.ReadChanges{ClearFailure: true}))
	exec("a Series with a failure row is deleted", `DELETE FROM series WHERE site = 'novelfull' AND series_id = 'b'`)
	exec("a bulk delete", `DELETE FROM series WHERE series_id LIKE 'bulk1%'`)
	exec("a bulk finish", `UPDATE series SET finished_at = 9 WHERE series_id LIKE 'bulk2%'`)
	exec("check stamps", `UPDATE series SET checked_at = checked_at + 1`)

	var pollable, noChapter int64
	if err := s.Pool().QueryRow(ctx, `SELECT pollable, no_chapter FROM site_tallies WHERE site = 'novelfull'`).Scan(&pollable, &noChapter); err != nil || pollable == 0 || noChapter == 0 {
		t.Fatalf("the walk should leave novelfull with pollable and no_chapter Series: %d, %d, %v", pollable, noChapter, err)
	}
}
