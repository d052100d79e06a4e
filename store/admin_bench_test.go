package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// seedMany puts n Series on the six Sites with generate_series, one in a
// hundred in each filter, nearly all bookmarked, then ANALYZEs and VACUUMs so
// the planner and the visibility map see what production would.
func seedMany(tb testing.TB, pool *pgxpool.Pool, n int, now time.Time) {
	tb.Helper()
	ctx := context.Background()
	nowMS := now.UnixMilli()
	old := now.Add(-30 * 24 * time.Hour).UnixMilli()
	fresh := now.Add(-10 * time.Minute).UnixMilli()
	stmts := []string{
		`INSERT INTO readers (discord_id, name, created_at) VALUES ('r1', 'Reader One', 0) ON CONFLICT DO NOTHING`,
		fmt.Sprintf(`INSERT INTO series (site, series_id, url, title, cover_url, kind, latest_chapter_num,
			latest_raised_by, checked_at, finished_at, site_completed_at, created_at)
		SELECT (ARRAY['asurascans','demonicscans','comix','kagane','novelfull','lightnovelworld'])[i %% 6 + 1],
		       'b' || lpad(i::text, 7, '0'),
		       CASE WHEN i %% 100 = 2 THEN '' ELSE 'https://example.test/s/' || i END,
		       'Series ' || i, '', CASE WHEN i %% 6 >= 4 THEN 'novel' ELSE 'manga' END,
		       CASE WHEN i %% 100 IN (0, 3) THEN NULL ELSE (i %% 300)::numeric END,
		       CASE WHEN i %% 100 = 5 THEN 'r1' END,
		       CASE WHEN i %% 100 = 0 THEN 0 WHEN i %% 100 = 1 THEN %d ELSE %d END,
		       CASE WHEN i %% 100 = 7 THEN %d ELSE 0 END,
		       CASE WHEN i %% 100 = 6 THEN %d ELSE 0 END,
		       %d
		  FROM generate_series(1, %d) AS i`, old, fresh, old, fresh, nowMS, n),
		fmt.Sprintf(`INSERT INTO poll_failures (site, series_id, outcome, failing_since)
		SELECT site, series_id,
		       CASE WHEN substr(series_id, 7, 2) = '08' THEN 'unfetchable' ELSE 'errors' END, %d
		  FROM series WHERE substr(series_id, 7, 2) IN ('04', '05', '08')`, old),
		`INSERT INTO bookmarks (reader_id, site, series_id, created_at, updated_at)
		SELECT 'r1', site, series_id, 0, 0 FROM series WHERE substr(series_id, 7, 2) <> '09'`,
		`VACUUM ANALYZE series`, `VACUUM ANALYZE poll_failures`, `VACUUM ANALYZE bookmarks`,
	}
	for _, q := range stmts {
		if _, err := pool.Exec(ctx, q); err != nil {
			tb.Fatalf("seed: %v\n%s", err, q)
		}
	}
}

// BenchmarkSeriesList pages through every filter's first page and a deep
// page at 50 000 Series.
func BenchmarkSeriesList(b *testing.B) {
	pool := storetest.Pool(b, nil)
	s := store.New(pool)
	now := time.Now()
	seedMany(b, pool, 50_000, now)
	ctx := context.Background()
	for _, f := range store.Filters {
		b.Run("filter="+string(f)+"/first", func(b *testing.B) {
			for b.Loop() {
				if _, err := s.ListAdminSeries(ctx, store.SeriesQuery{Filter: f}, now); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("filter="+string(f)+"/count", func(b *testing.B) {
			// The list page prints its filter's count beside the rows.
			for b.Loop() {
				if _, err := s.CountAdminSeries(ctx, store.SeriesQuery{Filter: f}, now); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("filter="+string(f)+"/deep", func(b *testing.B) {
			q := store.SeriesQuery{Filter: f, AfterSite: "kagane", AfterID: "b0040000"}
			for b.Loop() {
				if _, err := s.ListAdminSeries(ctx, q, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("stats", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.AdminStats(ctx, now); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// explain returns the plan text of the list query of q.
func explain(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), "EXPLAIN "+sql, args...)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}
