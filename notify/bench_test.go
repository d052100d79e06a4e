package notify_test

import (
	"context"
	"log/slog"
	"strconv"
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
	var series []storetest.Series
	var failures []storetest.Failure
	for i := 1; i <= 50000; i++ {
		r := storetest.Series{Site: word.Sites[i%6], ID: "s" + strconv.Itoa(i), URL: "https://example.test/" + strconv.Itoa(i),
			Kind: "manga", LatestChapter: "5", CheckedAt: now}
		series = append(series, r)
		if i%10 == 0 {
			failures = append(failures, storetest.Failure{Site: r.Site, Series: r.ID, Outcome: word.NoChapter, FailingSince: now.Add(-24 * time.Hour)})
		}
	}
	var passes []storetest.Pass
	for _, site := range word.Sites {
		for at := now.Add(-14 * 24 * time.Hour); !at.After(now); at = at.Add(10 * time.Minute) {
			passes = append(passes, storetest.Pass{Site: site, StartedAt: at, Due: 40, Checked: 40, Counts: word.Counts{OK: 40}})
		}
	}
	storetest.Insert(b, st.Pool(), series...)
	storetest.Insert(b, st.Pool(), failures...)
	storetest.Insert(b, st.Pool(), passes...)
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
