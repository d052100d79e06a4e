package poller_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// BenchmarkHealthyPass is one pass of a Lane over 200 due Series whose
// pages read the same as last time: the database cost of the common case
// (one check stamp per Poll, the pass-log row, the next-due read), with the
// Site itself answering at once. It reports statements per Poll too.
func BenchmarkHealthyPass(b *testing.B) {
	tr := &stmts{}
	pool := storetest.Pool(b, func(c *pgxpool.Config) { c.ConnConfig.Tracer = tr })
	st := store.New(pool)
	ctx := context.Background()
	const n = 200
	if _, err := pool.Exec(ctx, `INSERT INTO series (site, series_id, url, kind, latest_chapter_num, title, created_at)
		SELECT 'novelfull', 's' || i, 'https://novelfull.com/s' || i || '.html', 'novel', 10, 'A Title', 0
		  FROM generate_series(1, $1::int) i`, n); err != nil {
		b.Fatal(err)
	}
	clk := newClock()
	p := poller.New(st, newReader(), poller.Config{Now: clk.Now, Logger: slog.New(slog.DiscardHandler), Sites: []string{"novelfull"}})
	b.Cleanup(p.Close)
	// The first pass learns every Series' facts; the measured ones find them unchanged.
	clk.Advance(time.Hour)
	if pass := p.RunPass(ctx, "novelfull"); pass.Due != n {
		b.Fatalf("warm-up pass owed %d, want %d", pass.Due, n)
	}
	tr.reset()
	b.ResetTimer()
	for b.Loop() {
		clk.Advance(time.Hour)
		if pass := p.RunPass(ctx, "novelfull"); pass.Checked != n {
			b.Fatalf("pass checked %d, want %d: %+v", pass.Checked, n, pass)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(tr.writes()))/float64(b.N*n), "writes/poll")
}
