package poller_test

import (
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// TestEachLaneRecordsItsFailingFigureOnceAnHour runs two Lanes passing
// every few milliseconds: each writes one failing_history row for the hour,
// holding its Site's failing figure, however many passes follow, and one
// more once the clock enters the next hour (issue 23, item 11).
func TestEachLaneRecordsItsFailingFigureOnceAnHour(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.with(func(c *poller.Config) {
		c.DefaultRest = 20 * time.Millisecond // passes follow each other quickly
		c.Sites = []string{site, "demonicscans"}
	})
	// A Series failing for 13 hours; without an address no pass reads it,
	// so it stays failing.
	storetest.Insert(t, r.pool, storetest.Series{Site: site, ID: "f", LatestChapter: "5", CheckedAt: r.clk.Now()})
	storetest.Insert(t, r.pool, storetest.Failure{Site: site, Series: "f", Outcome: word.Errors, FailingSince: r.clk.Now().Add(-13 * time.Hour)})
	rows := func(s string) (n, failing int) {
		t.Helper()
		err := r.pool.QueryRow(r.ctx, `SELECT count(*), coalesce(max(failing), -1) FROM failing_history WHERE site = $1`, s).Scan(&n, &failing)
		if err != nil {
			t.Fatal(err)
		}
		return n, failing
	}
	stop := r.run()
	waitFor(t, "the first hour's rows", func() bool {
		a, _ := rows(site)
		b, _ := rows("demonicscans")
		return a == 1 && b == 1
	})
	first := len(r.passes(site))
	waitFor(t, "more passes", func() bool { return len(r.passes(site)) >= first+5 })
	if n, failing := rows(site); n != 1 || failing != 1 {
		t.Fatalf("novelfull holds %d rows, failing %d; want one row of 1 within the hour", n, failing)
	}
	if n, failing := rows("demonicscans"); n != 1 || failing != 0 {
		t.Fatalf("demonicscans holds %d rows, failing %d; want one row of 0", n, failing)
	}
	r.clk.Advance(time.Hour)
	waitFor(t, "the next hour's rows", func() bool {
		a, _ := rows(site)
		b, _ := rows("demonicscans")
		return a == 2 && b == 2
	})
	stop()
}
