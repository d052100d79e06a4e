package store_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// seedMany puts n Series on the six Sites one in a
// hundred in each filter, nearly all bookmarked, then ANALYZEs and VACUUMs so
// the planner and the visibility map see what production would.
func seedMany(tb testing.TB, pool *pgxpool.Pool, n int, now time.Time) {
	tb.Helper()
	old, fresh := now.Add(-30*24*time.Hour), now.Add(-10*time.Minute)
	storetest.Ensure(tb, pool, storetest.Reader{ID: "r1", Name: "Reader One"})
	var series []storetest.Series
	var failures []storetest.Failure
	var bookmarks []storetest.Bookmark
	for i := 1; i <= n; i++ {
		m := i % 100
		r := storetest.Series{Site: word.Sites[i%6], ID: fmt.Sprintf("b%07d", i), URL: "https://example.test/s/" + strconv.Itoa(i),
			Title: "Series " + strconv.Itoa(i), Kind: "manga", LatestChapter: strconv.Itoa(i % 300), CheckedAt: fresh, CreatedAt: now}
		if m == 2 {
			r.URL = ""
		}
		if i%6 >= 4 {
			r.Kind = "novel"
		}
		switch m {
		case 0:
			r.LatestChapter, r.CheckedAt = "", time.Time{}
		case 1:
			r.CheckedAt = old
		case 3:
			r.LatestChapter = ""
		case 5:
			r.RaisedBy = "r1"
		case 6:
			r.CompletedAt = fresh
		case 7:
			r.FinishedAt = old
		}
		series = append(series, r)
		switch m {
		case 4, 5:
			failures = append(failures, storetest.Failure{Site: r.Site, Series: r.ID, Outcome: word.Errors, FailingSince: old})
		case 8:
			failures = append(failures, storetest.Failure{Site: r.Site, Series: r.ID, Outcome: word.Unfetchable, FailingSince: old})
		}
		if m != 9 {
			bookmarks = append(bookmarks, storetest.Bookmark{Reader: "r1", Site: r.Site, Series: r.ID})
		}
	}
	storetest.Insert(tb, pool, series...)
	storetest.Insert(tb, pool, failures...)
	storetest.Insert(tb, pool, bookmarks...)
	for _, q := range []string{`VACUUM ANALYZE series`, `VACUUM ANALYZE poll_failures`, `VACUUM ANALYZE bookmarks`} {
		if _, err := pool.Exec(context.Background(), q); err != nil {
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
