package notify_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// BenchmarkConditions derives all four conditions for every Site (what the
// verdict line does on each /admin load, and a pass's deferred call does
// for its own Site) over 50 000 Series, 5 000 failure rows and fourteen days
// of passes every ten minutes on six Lanes.
func BenchmarkConditions(b *testing.B) {
	st := storetest.New(b)
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, q := range []string{
		`INSERT INTO series (site, series_id, url, kind, latest_chapter_num, checked_at, created_at)
		 SELECT (ARRAY['asurascans','demonicscans','comix','kagane','novelfull','lightnovelworld'])[i % 6 + 1],
		        's' || i, 'https://example.test/' || i, 'manga', 5, $1::bigint, 0
		   FROM generate_series(1, 50000) i`,
		`INSERT INTO poll_failures (site, series_id, outcome, failing_since)
		 SELECT site, series_id, 'no_chapter', $1::bigint - 86400000 FROM series WHERE series_id LIKE 's%0'`,
		`INSERT INTO poll_passes (site, started_at, finished_at, due, checked, ok)
		 SELECT s, t, t, 40, 40, 40
		   FROM unnest(ARRAY['asurascans','demonicscans','comix','kagane','novelfull','lightnovelworld']) s,
		        generate_series($1::bigint - 14 * 86400000, $1::bigint, 600000) t`,
	} {
		if _, err := st.Pool().Exec(ctx, q, now.UnixMilli()); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := st.Pool().Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	n, err := notify.New(notify.Options{Store: st, BrowserSites: word.BrowserSites{word.Comix: true, word.Kagane: true}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		conds, err := n.Conditions(ctx, now)
		if err != nil || len(conds) != 0 {
			b.Fatalf("conditions %v, %v: want none on healthy Lanes", conds, err)
		}
	}
}
