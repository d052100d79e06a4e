package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// seedWide puts n Series on the six Sites with generate_series so that every
// filter holds far more than FigureCap rows (between 6 and 16 in a hundred),
// then VACUUM ANALYZEs so the planner and the visibility map see what
// production would. Failure rows go through poll_failures, so migration
// 0009's triggers copy them onto series as the Poll's writes would.
func seedWide(tb testing.TB, pool *pgxpool.Pool, n int, now time.Time) {
	tb.Helper()
	ctx := context.Background()
	old := now.Add(-30 * 24 * time.Hour).UnixMilli()
	fresh := now.Add(-10 * time.Minute).UnixMilli()
	stmts := []string{
		`INSERT INTO readers (discord_id, name, created_at) VALUES ('r1', 'Reader One', 0) ON CONFLICT DO NOTHING`,
		fmt.Sprintf(`INSERT INTO series (site, series_id, url, title, cover_url, kind, latest_chapter_num,
			latest_raised_by, checked_at, finished_at, site_completed_at, created_at)
		SELECT (ARRAY['asurascans','demonicscans','comix','kagane','novelfull','lightnovelworld'])[i %% 6 + 1],
		       'b' || lpad(i::text, 7, '0'),
		       CASE WHEN (i / 6) %% 100 BETWEEN 20 AND 29 THEN '' ELSE 'https://example.test/s/' || i END,
		       'Series ' || i, '', CASE WHEN i %% 6 >= 4 THEN 'novel' ELSE 'manga' END,
		       CASE WHEN (i / 6) %% 100 BETWEEN 35 AND 44 THEN NULL ELSE ((i / 6) %% 300)::numeric END,
		       CASE WHEN (i / 6) %% 100 BETWEEN 45 AND 52 THEN 'r1' END,
		       CASE WHEN (i / 6) %% 100 < 10 THEN 0 WHEN (i / 6) %% 100 < 20 THEN %d ELSE %d END,
		       CASE WHEN (i / 6) %% 100 BETWEEN 70 AND 79 THEN %d ELSE 0 END,
		       CASE WHEN (i / 6) %% 100 BETWEEN 60 AND 69 THEN %d ELSE 0 END, 0
		  FROM generate_series(1, %d) AS i`, old, fresh, old, fresh, n),
		fmt.Sprintf(`INSERT INTO poll_failures (site, series_id, outcome, failing_since)
		SELECT site, series_id,
		       CASE WHEN (substr(series_id, 2)::int / 6) %% 100 BETWEEN 30 AND 34 THEN 'unfetchable'
		            WHEN (substr(series_id, 2)::int / 6) %% 100 BETWEEN 53 AND 56 THEN 'no_chapter'
		            ELSE 'errors' END,
		       CASE WHEN (substr(series_id, 2)::int / 6) %% 100 >= 96 THEN %d ELSE %d END
		  FROM series WHERE (substr(series_id, 2)::int / 6) %% 100 BETWEEN 30 AND 59
		     OR (substr(series_id, 2)::int / 6) %% 100 >= 96`, fresh, old),
		`INSERT INTO bookmarks (reader_id, site, series_id, created_at, updated_at)
		SELECT 'r1', site, series_id, 0, 0 FROM series
		 WHERE (substr(series_id, 2)::int / 6) %% 100 NOT BETWEEN 80 AND 95`,
		`VACUUM ANALYZE series`, `VACUUM ANALYZE poll_failures`, `VACUUM ANALYZE bookmarks`,
	}
	for _, q := range stmts {
		if _, err := pool.Exec(ctx, strings.ReplaceAll(q, "%%", "%")); err != nil {
			tb.Fatalf("seed: %v\n%s", err, q)
		}
	}
}

// planNode is the part of EXPLAIN (ANALYZE, FORMAT JSON) the bound reads.
type planNode struct {
	Type       string     `json:"Node Type"`
	Relation   string     `json:"Relation Name"`
	Index      string     `json:"Index Name"`
	Rows       float64    `json:"Actual Rows"`
	Loops      float64    `json:"Actual Loops"`
	Removed    float64    `json:"Rows Removed by Filter"`
	RemovedIdx float64    `json:"Rows Removed by Index Recheck"`
	SortMethod string     `json:"Sort Method"`
	Plans      []planNode `json:"Plans"`
}

// walk returns the rows every scan node touched (returned plus filtered
// out, times its loops) and the node types a bounded plan must not hold.
func (p planNode) walk() (touched float64, bad []string) {
	switch p.Type {
	case "Seq Scan", "Hash Join", "Hash", "Materialize", "HashAggregate", "Bitmap Heap Scan":
		bad = append(bad, p.Type+" "+p.Relation+p.Index)
	case "Sort":
		bad = append(bad, "Sort ("+p.SortMethod+")")
	}
	if strings.HasSuffix(p.Type, "Scan") {
		touched += (p.Rows + p.Removed + p.RemovedIdx) * max(p.Loops, 1)
	}
	for _, c := range p.Plans {
		t, b := c.walk()
		touched += t
		bad = append(bad, b...)
	}
	return touched, bad
}

// listMaySort: a list page of a time-compared filter on one Site may read
// that Site's rows after the cursor through the filter's time index and
// sort them (the planner's choice when they are few); the row bound still
// holds it to a few hundred. A count never may.
func listMaySort(node string) bool {
	return strings.HasPrefix(node, "Sort") || strings.HasPrefix(node, "Bitmap Heap Scan")
}

// analyze runs one statement under EXPLAIN ANALYZE and returns its plan.
func analyze(t *testing.T, pool *pgxpool.Pool, q store.Queued) (planNode, string) {
	t.Helper()
	var raw []byte
	if err := pool.QueryRow(context.Background(), "EXPLAIN (ANALYZE, FORMAT JSON) "+q.SQL, q.Args...).Scan(&raw); err != nil {
		t.Fatalf("explain: %v\n%s", err, q.SQL)
	}
	var out []struct{ Plan planNode }
	if err := json.Unmarshal(raw, &out); err != nil || len(out) != 1 {
		t.Fatalf("explain output: %v", err)
	}
	return out[0].Plan, string(raw)
}

// TestEveryFigureIsBounded plans, under EXPLAIN ANALYZE, exactly the
// statements the pages send (the landing figures, and each filter's list
// page and caption count: first page, a deep keyset page, with a Site and
// with a kind) over 30 000 Series where every filter holds thousands. A
// figure or count may touch at most a few thousand rows, a list page a few
// hundred more than its page; no plan may scan a table, hash one, or sort or
// materialise a key set before its limit.
func TestEveryFigureIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 30 000 Series")
	}
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	now := time.Now()
	seedWide(t, pool, 30_000, now)

	check := func(name string, b *store.Batch, limit float64, list bool) {
		t.Helper()
		for _, q := range store.QueuedStatements(b) {
			plan, raw := analyze(t, pool, q)
			touched, bad := plan.walk()
			if list {
				bad = slices.DeleteFunc(bad, listMaySort)
			}
			if len(bad) > 0 || touched > limit {
				t.Errorf("%s touches %.0f rows (limit %.0f), unbounded nodes %v:\n%s", name, touched, limit, bad, raw)
			} else if testing.Verbose() {
				t.Logf("%s touches %.0f rows", name, touched)
			}
		}
	}
	stats := s.NewBatch()
	stats.AdminStats(now, map[store.Filter]int64{})
	check("landing figures", stats, float64(len(store.Filters))*(store.FigureCap+1)+50, false)

	for _, f := range store.Filters {
		for _, q := range []store.SeriesQuery{
			{Filter: f},
			{Filter: f, AfterSite: "comix", AfterID: "b0020000"},
			{Filter: f, Site: "kagane"},
			{Filter: f, Site: "kagane", AfterSite: "kagane", AfterID: "b0020000"},
			{Filter: f, Kind: "novel"},
		} {
			b := s.NewBatch()
			if err := b.ListAdminSeries(q, now, &store.AdminSeriesPage{}); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("list %+v", q), b, 1500, true)
			var n int64
			c := s.NewBatch()
			if err := c.CountAdminSeries(q, now, &n); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("count %+v", q), c, store.FigureCap+1+50, false)
		}
	}
}
