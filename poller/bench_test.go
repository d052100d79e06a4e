package poller_test

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
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
	series := make([]storetest.Series, n)
	for i := range series {
		id := "s" + strconv.Itoa(i+1)
		series[i] = storetest.Series{Site: word.Novelfull, ID: id, URL: "https://novelfull.com/" + id + ".html", Kind: word.Novel,
			LatestChapter: "10", Title: "A Title"}
	}
	storetest.Insert(b, pool, series...)
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
