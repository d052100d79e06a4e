package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// passKind is how the owner-notice predicates read one pass-log row.
type passKind struct {
	stall       bool // a stall pass
	refusing    bool // a refusing pass (no-browser-route)
	sidecarFail bool // a pass that failed to reach the sidecar
	ignored     bool // passed over by every run (another replica's pass)
	reach       bool // a pass that reached the sidecar
}

// TestEverySkipAndOutcomeIsReadByThePredicatesThatNeedIt writes one pass of
// each Skip value, and one pass that ran for each Outcome, and asks each
// run predicate how it reads the row. Its table spells the expected reading
// of every word, so a predicate whose word was renamed or mistyped (a skip
// value no pass writes any more, an outcome column left out) fails here.
func TestEverySkipAndOutcomeIsReadByThePredicatesThatNeedIt(t *testing.T) {
	t.Parallel()
	ran := func(due, checked int, c word.Counts) store.PassRow {
		return store.PassRow{Due: due, Checked: checked, Counts: c}
	}
	skipped := func(s word.Skip) store.PassRow { return store.PassRow{Due: 1, Skip: s} }
	cases := []struct {
		name string
		row  store.PassRow
		want passKind
	}{
		{"skip " + string(word.SkipNotLeader), skipped(word.SkipNotLeader), passKind{ignored: true}},
		{"skip " + string(word.SkipLockError), skipped(word.SkipLockError), passKind{}},
		{"skip " + string(word.SkipNoLane), skipped(word.SkipNoLane), passKind{}},
		{"skip " + string(word.SkipDBError), skipped(word.SkipDBError), passKind{}},
		{"skip " + string(word.SkipPaused), skipped(word.SkipPaused), passKind{}},
		{"skip " + string(word.SkipRefusing), skipped(word.SkipRefusing), passKind{refusing: true}},
		{"skip " + string(word.SkipNoBrowser), skipped(word.SkipNoBrowser), passKind{sidecarFail: true}},
		{"skip " + string(word.SkipBrowserDown), skipped(word.SkipBrowserDown), passKind{sidecarFail: true}},
		{"skip " + string(word.SkipDueError), skipped(word.SkipDueError), passKind{}},
		{"skip " + string(word.SkipStopped), skipped(word.SkipStopped), passKind{}},
		{"a pass that owed Polls and made none", ran(1, 0, word.Counts{}), passKind{stall: true}},
		{"a pass with nothing due", ran(0, 0, word.Counts{}), passKind{}},
		{"outcome " + string(word.OK), ran(1, 1, word.Counts{OK: 1}), passKind{reach: true}},
		{"outcome " + string(word.NoChapter), ran(1, 1, word.Counts{NoChapter: 1}), passKind{reach: true}},
		{"outcome " + string(word.NotFound), ran(1, 1, word.Counts{NotFound: 1}), passKind{reach: true}},
		{"outcome " + string(word.Errors), ran(1, 1, word.Counts{Errors: 1}), passKind{reach: true}},
		{"outcome " + string(word.Refused), ran(1, 0, word.Counts{Refused: 1}), passKind{refusing: true, reach: true}},
		// Unfetchable never fetches: it says nothing of the sidecar, and a
		// pass of nothing else owed Polls and checked none.
		{"outcome " + string(word.Unfetchable), ran(1, 0, word.Counts{Unfetchable: 1}), passKind{stall: true}},
		{"outcome " + string(word.Unreachable), ran(1, 0, word.Counts{Unreachable: 1}), passKind{stall: true, sidecarFail: true}},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.name] = true
	}
	for _, s := range word.Skips {
		if s != word.SkipNone && !covered["skip "+string(s)] {
			t.Errorf("skip value %q has no case", s)
		}
	}
	for _, o := range word.Outcomes {
		if !covered["outcome "+string(o)] {
			t.Errorf("outcome %q has no case", o)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := readPass(t, storetest.New(t), c.row); got != c.want {
				t.Fatalf("read as %+v, want %+v", got, c.want)
			}
		})
	}
}

// readPass writes row at T on three Lanes and reads it with each predicate:
// alone on asurascans; after a stall pass on demonicscans (a run it ends
// unless it is a stall pass or ignored); after a pass that failed to reach
// the sidecar on kagane (a run it ends only if it reached the sidecar).
func readPass(t *testing.T, s *store.Store, row store.PassRow) passKind {
	t.Helper()
	ctx := context.Background()
	const T = int64(10 * time.Hour / time.Millisecond)
	insert := func(site string, at int64, r store.PassRow) {
		r.Site, r.StartedAt, r.FinishedAt = site, storetest.Milli(at), storetest.Milli(at)
		if err := s.InsertPass(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	insert("asurascans", T, row)
	insert("demonicscans", T-1, store.PassRow{Due: 1})
	insert("demonicscans", T, row)
	insert("kagane", T-1, store.PassRow{Skip: word.SkipBrowserDown})
	insert("kagane", T, row)

	var k passKind
	var err error
	check := func(_ time.Time, ok bool, e error) bool {
		if e != nil {
			err = e
		}
		return ok
	}
	k.stall = check(s.StallRun(ctx, "asurascans", storetest.Milli(T), time.Time{}))
	k.refusing = check(s.RefusingRun(ctx, "asurascans", storetest.Milli(T), time.Time{}))
	k.sidecarFail = check(s.SidecarDownRun(ctx, []string{"asurascans"}, storetest.Milli(T), time.Time{}))
	since, kept, e := s.StallRun(ctx, "demonicscans", storetest.Milli(T), time.Time{})
	check(since, kept, e)
	k.ignored = kept && !k.stall && since.Equal(storetest.Milli(T-1))
	k.reach = !check(s.SidecarDownRun(ctx, []string{"kagane"}, storetest.Milli(T), time.Time{}))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestEveryFailingOutcomeIsReadByTheFiltersThatNeedIt writes a failure row
// of each failing Outcome and checks the two predicates that name a word:
// unpollable reads unfetchable, adapter-broken reads no_chapter, and the
// failing filter reads every one.
func TestEveryFailingOutcomeIsReadByTheFiltersThatNeedIt(t *testing.T) {
	t.Parallel()
	failing := []word.Outcome{word.NoChapter, word.Unfetchable, word.NotFound, word.Errors}
	for _, o := range failing {
		t.Run(string(o), func(t *testing.T) {
			t.Parallel()
			s := storetest.New(t)
			ctx := context.Background()
			now := time.UnixMilli(0).Add(30 * 24 * time.Hour)
			if err := s.CreateSeries(ctx, store.Series{Site: "comix", SeriesID: "a", URL: "https://comix.to/title/a", Kind: "manga"}, storetest.Milli(1)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Pool().Exec(ctx, `UPDATE series SET latest_chapter_num = 3 WHERE series_id = 'a'`); err != nil {
				t.Fatal(err)
			}
			if err := s.RecordFailure(ctx, "comix", "a", o, storetest.Milli(1)); err != nil {
				t.Fatal(err)
			}
			count := func(f store.Filter) int64 {
				n, err := s.CountAdminSeries(ctx, store.SeriesQuery{Filter: f}, now)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			if got, want := count(store.FilterUnpollable) == 1, o == word.Unfetchable; got != want {
				t.Errorf("unpollable holds %v for a %s row, want %v", got, o, want)
			}
			if count(store.FilterFailing) != 1 {
				t.Errorf("failing does not read a %s row", o)
			}
			_, broken, err := s.AdapterBroken(ctx, "comix", now)
			if err != nil {
				t.Fatal(err)
			}
			if want := o == word.NoChapter; broken != want {
				t.Errorf("adapter-broken holds %v for a %s row, want %v", broken, o, want)
			}
		})
	}
}
