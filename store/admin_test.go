package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// fixture is one Series and the facts the filters read.
type fixture struct {
	id            string
	url           string
	chapter       string // "" = NULL
	raisedBy      string
	raisedAgo     time.Duration // when the Sighting raised it (sighted_at); 0 = NULL
	polled        string        // the highest number a read showed; "" = storetest's default
	checkedAgo    time.Duration // 0 = never
	finished      bool
	siteCompleted bool
	failure       string // outcome word; "" = no failure row
	failingFor    time.Duration
	bookmarked    bool
}

func seedFixtures(t *testing.T, pool *pgxpool.Pool, fs []fixture) {
	t.Helper()
	storetest.Ensure(t, pool, storetest.Reader{ID: "r1", Name: "Reader One"})
	for _, f := range fs {
		row := storetest.Series{Site: word.Asurascans, ID: f.id, URL: f.url, Title: f.id, Kind: word.Manga,
			LatestChapter: f.chapter, RaisedBy: f.raisedBy, Polled: f.polled}
		if f.raisedAgo > 0 {
			row.SightedAt = t0.Add(-f.raisedAgo)
		}
		if f.checkedAgo > 0 {
			row.CheckedAt = t0.Add(-f.checkedAgo)
		}
		if f.finished {
			row.FinishedAt = t0.Add(-time.Hour)
		}
		if f.siteCompleted {
			row.CompletedAt = t0.Add(-time.Hour)
		}
		storetest.Insert(t, pool, row)
		if f.failure != "" {
			storetest.Insert(t, pool, storetest.Failure{Site: word.Asurascans, Series: f.id,
				Outcome: word.Outcome(f.failure), FailingSince: t0.Add(-f.failingFor)})
		}
		if f.bookmarked {
			storetest.Insert(t, pool, storetest.Bookmark{Reader: "r1", Site: word.Asurascans, Series: f.id})
		}
	}
}

const addr = "https://asuracomic.net/series/x"

// filterFixtures puts at least one Series in every filter, and the edge
// cases the filter definitions name beside them (CONTEXT.md).
var filterFixtures = []fixture{
	{id: "healthy", url: addr, chapter: "12", checkedAgo: time.Minute, bookmarked: true},
	{id: "never", url: addr, bookmarked: true},
	// Polled, but no Poll ever reached its page (refused or unreachable
	// write no failure row): never read, not "no chapter" (issue 23).
	{id: "unreached", url: addr, checkedAgo: time.Minute, bookmarked: true},
	{id: "never-finished", url: addr, finished: true, bookmarked: true},
	{id: "stale", url: addr, chapter: "3", checkedAgo: 13 * time.Hour, bookmarked: true},
	{id: "stale-finished", url: addr, chapter: "3", checkedAgo: 13 * time.Hour, finished: true, bookmarked: true},
	{id: "no-address", url: "", checkedAgo: time.Minute, chapter: "1", bookmarked: true},
	{id: "gate-refused", url: "http://wrong.example/x", chapter: "4", checkedAgo: time.Minute, failure: "unfetchable", failingFor: 2 * time.Hour},
	{id: "never-yielded", url: addr, checkedAgo: time.Minute, failure: "no_chapter", failingFor: 90 * 24 * time.Hour, bookmarked: true},
	{id: "failing-3mo", url: addr, chapter: "40", checkedAgo: time.Minute, failure: "not_found", failingFor: 90 * 24 * time.Hour, bookmarked: true},
	{id: "failing-1h", url: addr, chapter: "40", checkedAgo: time.Minute, failure: "errors", failingFor: time.Hour, bookmarked: true},
	{id: "failing-finished", url: addr, chapter: "40", checkedAgo: time.Minute, failure: "errors", failingFor: 13 * time.Hour, finished: true, bookmarked: true},
	{id: "unverified", url: addr, chapter: "41", raisedBy: "r1", checkedAgo: time.Minute, failure: "no_chapter", failingFor: 13 * time.Hour, bookmarked: true},
	{id: "raised-healthy", url: addr, chapter: "41", raisedBy: "r1", raisedAgo: time.Hour, checkedAgo: time.Minute, polled: "40", bookmarked: true},
	{id: "raised-1h", url: addr, chapter: "41", raisedBy: "r1", raisedAgo: time.Hour, checkedAgo: time.Minute, failure: "errors", failingFor: time.Hour, bookmarked: true},
	// Read healthy for thirteen hours since a Reader raised it, and no read
	// has shown the number: unverified although nothing fails (issue 22,
	// item 11).
	{id: "raised-13h", url: addr, chapter: "41", raisedBy: "r1", raisedAgo: 13 * time.Hour, checkedAgo: time.Minute, polled: "40", bookmarked: true},
	{id: "completed", url: addr, chapter: "100", checkedAgo: time.Minute, siteCompleted: true, bookmarked: true},
	{id: "completed-finished", url: addr, chapter: "100", checkedAgo: time.Minute, siteCompleted: true, finished: true},
}

// want is each filter's exact membership over filterFixtures.
var want = map[store.Filter][]string{
	store.FilterNeverChecked:  {"never", "unreached"},
	store.FilterStale:         {"stale"},
	store.FilterUnpollable:    {"gate-refused", "no-address"},
	store.FilterNoChapter:     {"never-yielded"},
	store.FilterFailing:       {"failing-3mo", "failing-finished", "unverified"},
	store.FilterUnverified:    {"raised-13h", "unverified"},
	store.FilterSiteCompleted: {"completed"},
	store.FilterFinished:      {"completed-finished", "failing-finished", "never-finished", "stale-finished"},
	store.FilterOrphan:        {"completed-finished", "gate-refused"},
}

func listIDs(t *testing.T, s *store.Store, q store.SeriesQuery) []string {
	t.Helper()
	var ids []string
	for {
		page, err := s.ListAdminSeries(context.Background(), q, t0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Rows {
			ids = append(ids, r.SeriesID)
		}
		if !page.More {
			return ids
		}
		last := page.Rows[len(page.Rows)-1]
		q.AfterSite, q.AfterID = last.Site, last.SeriesID
	}
}

func TestEachFilterListsExactlyItsSeriesAndItsFigureAgrees(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	seedFixtures(t, pool, filterFixtures)
	stats, err := s.AdminStats(context.Background(), t0)
	if err != nil {
		t.Fatal(err)
	}
	want[store.FilterAll] = nil
	for _, f := range filterFixtures {
		want[store.FilterAll] = append(want[store.FilterAll], f.id)
	}
	slices.Sort(want[store.FilterAll])
	for _, f := range store.Filters {
		t.Run("filter "+string(f), func(t *testing.T) {
			// Page size 2 walks the keyset cursor too.
			got := listIDs(t, s, store.SeriesQuery{Filter: f, Limit: 2})
			if !slices.Equal(got, want[f]) {
				t.Errorf("list = %v, want %v", got, want[f])
			}
			if stats[f] != int64(len(got)) {
				t.Errorf("figure %d, list has %d", stats[f], len(got))
			}
			n, err := s.CountAdminSeries(context.Background(), store.SeriesQuery{Filter: f}, t0)
			if err != nil || n != int64(len(got)) {
				t.Errorf("count %d (%v), list has %d", n, err, len(got))
			}
		})
	}
}

func TestFailingIsDisjointFromNoChapterAndNeedsTwelveHours(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	seedFixtures(t, pool, filterFixtures)
	failing := listIDs(t, s, store.SeriesQuery{Filter: store.FilterFailing})
	unverified := listIDs(t, s, store.SeriesQuery{Filter: store.FilterUnverified})
	noChapter := listIDs(t, s, store.SeriesQuery{Filter: store.FilterNoChapter})
	for _, id := range noChapter {
		if slices.Contains(failing, id) {
			t.Errorf("%s is in both no-chapter and failing", id)
		}
	}
	if !slices.Contains(noChapter, "never-yielded") || slices.Contains(failing, "never-yielded") {
		t.Errorf("a Series that never succeeded must be in no-chapter and never in failing")
	}
	for _, id := range []string{"failing-1h", "raised-1h"} {
		if slices.Contains(failing, id) || slices.Contains(unverified, id) {
			t.Errorf("%s fails for under twelve hours and must be in neither filter", id)
		}
	}
	if !slices.Contains(failing, "failing-finished") {
		t.Errorf("a Finished Series keeps its evidence in failing")
	}
	if slices.Contains(unverified, "raised-healthy") {
		t.Errorf("a number raised an hour ago, read healthy since, is not unverified yet")
	}
	if !slices.Contains(unverified, "raised-13h") || slices.Contains(failing, "raised-13h") {
		t.Errorf("a number raised thirteen hours ago that healthy reads never showed is unverified, and not failing")
	}
	completed := listIDs(t, s, store.SeriesQuery{Filter: store.FilterSiteCompleted})
	if slices.Contains(completed, "completed-finished") {
		t.Errorf("site-completed must exclude a Finished Series")
	}
}

func TestSiteAndKindStackOnAFilter(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	ctx := context.Background()
	for _, in := range []store.Series{
		{Site: "asurascans", SeriesID: "a", URL: addr, Kind: "manga"},
		{Site: "novelfull", SeriesID: "n", URL: addr, Kind: "novel"},
		{Site: "comix", SeriesID: "c", URL: addr, Kind: "manga"},
	} {
		if err := s.CreateSeries(ctx, in, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		q    store.SeriesQuery
		want []string
	}{
		{store.SeriesQuery{Filter: store.FilterNeverChecked}, []string{"a", "c", "n"}},
		{store.SeriesQuery{Filter: store.FilterNeverChecked, Site: "comix"}, []string{"c"}},
		{store.SeriesQuery{Filter: store.FilterNeverChecked, Kind: "novel"}, []string{"n"}},
		{store.SeriesQuery{Filter: store.FilterNeverChecked, Kind: "novel", Site: "comix"}, nil},
	}
	for _, c := range cases {
		got := listIDs(t, s, c.q)
		if !slices.Equal(got, c.want) {
			t.Errorf("%+v: got %v, want %v", c.q, got, c.want)
		}
		n, _ := s.CountAdminSeries(ctx, c.q, t0)
		if n != int64(len(c.want)) {
			t.Errorf("%+v: figure %d, want %d", c.q, n, len(c.want))
		}
	}
}

func TestTheAdminJoinProjectsTheOutcomeWordAndItsAge(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	seedFixtures(t, pool, filterFixtures)
	d, err := s.GetAdminSeries(context.Background(), "asurascans", "unverified", t0)
	if err != nil {
		t.Fatal(err)
	}
	if d.FailureOutcome != "no_chapter" || !d.FailingSince.Equal(t0.Add(-13*time.Hour)) {
		t.Errorf("failure projected as %q since %v", d.FailureOutcome, d.FailingSince)
	}
	if !d.Failing || !d.Unverified || d.RaisedByName != "Reader One" || d.Bookmarks != 1 {
		t.Errorf("detail flags: %+v", d)
	}
	h, err := s.GetAdminSeries(context.Background(), "asurascans", "healthy", t0)
	if err != nil || h.FailureOutcome != "" || !h.FailingSince.IsZero() || h.Failing {
		t.Errorf("healthy Series: %+v %v", h, err)
	}
	if _, err := s.GetAdminSeries(context.Background(), "asurascans", "nope", t0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing Series: %v", err)
	}
}

func TestFinishAndUnfinishMoveASeriesBetweenFilters(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	seedFixtures(t, pool, filterFixtures)
	ctx := context.Background()
	if err := s.FinishSeries(ctx, "asurascans", "completed", t0); err != nil {
		t.Fatal(err)
	}
	if ids := listIDs(t, s, store.SeriesQuery{Filter: store.FilterSiteCompleted}); len(ids) != 0 {
		t.Errorf("finished Series still site-completed: %v", ids)
	}
	if err := s.UnfinishSeries(ctx, "asurascans", "completed"); err != nil {
		t.Fatal(err)
	}
	if ids := listIDs(t, s, store.SeriesQuery{Filter: store.FilterSiteCompleted}); !slices.Equal(ids, []string{"completed"}) {
		t.Errorf("un-finished Series not back: %v", ids)
	}
	if err := s.FinishSeries(ctx, "asurascans", "nope", storetest.Milli(1)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("finish of a missing Series: %v", err)
	}
}

func TestACorrectionClearsNothing(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	seedFixtures(t, pool, filterFixtures)
	ctx := context.Background()
	if err := s.CorrectLatestChapter(ctx, "asurascans", "unverified", "42.5"); err != nil {
		t.Fatal(err)
	}
	d, err := s.GetAdminSeries(ctx, "asurascans", "unverified", t0)
	if err != nil {
		t.Fatal(err)
	}
	if d.LatestChapter == nil || *d.LatestChapter != "42.5" || d.LatestRaisedBy == nil || d.FailureOutcome != "no_chapter" {
		t.Errorf("after correction: %+v", d)
	}
	if err := s.ClearAttribution(ctx, "asurascans", "unverified"); err != nil {
		t.Fatal(err)
	}
	d, _ = s.GetAdminSeries(ctx, "asurascans", "unverified", t0)
	if d.LatestRaisedBy != nil || d.Unverified || !d.Failing {
		t.Errorf("after clearing attribution: %+v", d)
	}
}

func TestTheLanesReadCountsTheWindowAndFindsTheLastPass(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	ctx := context.Background()
	ins := func(startedAgo time.Duration, ok, refused int, skip word.Skip) {
		st := t0.Add(-startedAgo)
		storetest.Insert(t, pool, storetest.Pass{Site: word.Comix, StartedAt: st, FinishedAt: st.Add(time.Second),
			Due: 3, Checked: ok, Skip: skip, Counts: word.Counts{OK: ok, Refused: refused}})
	}
	ins(20*time.Hour, 100, 0, "") // outside the window
	ins(2*time.Hour, 2, 1, "")
	ins(time.Hour, 0, 0, "paused")
	if err := s.PauseLane(ctx, "comix", t0.Add(time.Hour), t0); err != nil {
		t.Fatal(err)
	}
	var lanes []store.AdminLane
	b := s.NewBatch()
	b.AdminLanes(t0, &lanes)
	if err := s.Send(ctx, b); err != nil {
		t.Fatal(err)
	}
	if len(lanes) != 6 {
		t.Fatalf("%d lanes", len(lanes))
	}
	var c store.AdminLane
	for _, l := range lanes {
		if l.Site == "comix" {
			c = l
		}
	}
	if c.Passes != 2 || c.OK != 2 || c.Refused != 1 || c.LastSkip != "paused" || !c.LastStartedAt.Equal(t0.Add(-time.Hour)) || c.PausedUntil.IsZero() {
		t.Errorf("comix lane: %+v", c)
	}
	// The paused pass ran an hour before this Pause was asked for.
	if c.PauseServed {
		t.Errorf("an earlier paused pass serves a Pause asked for later: %+v", c)
	}
}

// TestKeysetPagesNeitherSkipNorRepeatWhenSitesShareSeriesIDs walks every
// filter, with and without a Site, in pages of 1, 3 and 7 over six Sites
// that all use the same Series ids, and checks the walk against one page
// holding the whole list and against the filter's count.
func TestKeysetPagesNeitherSkipNorRepeatWhenSitesShareSeriesIDs(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	ctx := context.Background()
	old, fresh := t0.Add(-30*24*time.Hour), t0.Add(-10*time.Minute)
	storetest.Insert(t, pool, storetest.Reader{ID: "r1", Name: "Reader One"})
	// Every Site holds the ids s00..s29; attributes vary by id and Site so
	// each filter holds rows on several Sites under the same id.
	var series []storetest.Series
	var failures []storetest.Failure
	var bookmarks []storetest.Bookmark
	for k0, site := range word.Sites {
		k := k0 + 1
		for i := range 30 {
			r := storetest.Series{Site: site, ID: fmt.Sprintf("s%02d", i), URL: "https://example.test/" + strconv.Itoa(i),
				Title: "T", Kind: "novel", LatestChapter: strconv.Itoa(i), CheckedAt: fresh}
			if (i+k)%7 == 2 {
				r.URL = ""
			}
			if k%2 == 0 {
				r.Kind = "manga"
			}
			if (i+k)%5 == 0 {
				r.LatestChapter = ""
			}
			if (i+k)%4 == 1 {
				r.RaisedBy = "r1"
			}
			switch (i + k) % 6 {
			case 0:
				r.CheckedAt = time.Time{}
			case 1:
				r.CheckedAt = old
			}
			if (i*k)%9 == 4 {
				r.FinishedAt = old
			}
			if (i+2*k)%8 == 3 {
				r.CompletedAt = fresh
			}
			series = append(series, r)
			if d := i % 10; d == 1 || d == 3 || d == 4 || d == 7 {
				f := storetest.Failure{Site: site, Series: r.ID, Outcome: word.Errors, FailingSince: old}
				if len(site)%2 == 0 {
					f.Outcome = word.Unfetchable
				}
				if d == 1 || d == 4 {
					f.FailingSince = fresh
				}
				failures = append(failures, f)
			}
			if i%10 != 5 {
				bookmarks = append(bookmarks, storetest.Bookmark{Reader: "r1", Site: site, Series: r.ID})
			}
		}
	}
	storetest.Insert(t, pool, series...)
	storetest.Insert(t, pool, failures...)
	storetest.Insert(t, pool, bookmarks...)
	key := func(r store.AdminSeries) string { return r.Site + "/" + r.SeriesID }
	for _, f := range store.Filters {
		for _, site := range []string{"", "kagane"} {
			whole, err := s.ListAdminSeries(ctx, store.SeriesQuery{Filter: f, Site: site, Limit: 500}, t0)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, r := range whole.Rows {
				want = append(want, key(r))
			}
			n, err := s.CountAdminSeries(ctx, store.SeriesQuery{Filter: f, Site: site}, t0)
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(len(want)) {
				t.Errorf("filter %q site %q: count %d, list %d", f, site, n, len(want))
			}
			if site == "" && f != store.FilterAll && len(want) > 0 {
				sites := map[string]bool{}
				for _, r := range whole.Rows {
					sites[r.Site] = true
				}
				if len(sites) < 2 {
					t.Errorf("filter %q: the fixture puts rows on only %d Site; the test proves nothing", f, len(sites))
				}
			}
			for _, size := range []int{1, 3, 7} {
				q := store.SeriesQuery{Filter: f, Site: site, Limit: size}
				var got []string
				for pages := 0; ; pages++ {
					if pages > 200 {
						t.Fatalf("filter %q: the walk does not end", f)
					}
					page, err := s.ListAdminSeries(ctx, q, t0)
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range page.Rows {
						got = append(got, key(r))
					}
					if !page.More {
						break
					}
					last := page.Rows[len(page.Rows)-1]
					q.AfterSite, q.AfterID = last.Site, last.SeriesID
				}
				if !slices.Equal(got, want) {
					t.Errorf("filter %q site %q in pages of %d:\n got %v\nwant %v", f, site, size, got, want)
				}
			}
		}
	}
}
