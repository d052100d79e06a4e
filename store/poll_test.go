package store_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// pollSeries creates a Series and sets columns on it directly.
func pollSeries(t *testing.T, s *store.Store, site, id, set string, args ...any) {
	t.Helper()
	ctx := context.Background()
	if err := s.CreateSeries(ctx, store.Series{Site: site, SeriesID: id, URL: "https://novelfull.com/" + id + ".html", Kind: "novel"}, storetest.Milli(1)); err != nil {
		t.Fatal(err)
	}
	if set != "" {
		args = append([]any{site, id}, args...)
		if _, err := s.Pool().Exec(ctx, `UPDATE series SET `+set+` WHERE site = $1 AND series_id = $2`, args...); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
	}
}

func pollFailing(t *testing.T, s *store.Store, site, id string, outcome word.Outcome, since int64) {
	t.Helper()
	if err := s.RecordFailure(context.Background(), site, id, outcome, storetest.Milli(since)); err != nil {
		t.Fatal(err)
	}
}

func TestTheFailureWriteKeepsItsAgeAndWritesNothingOnARepeat(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	pollSeries(t, s, "novelfull", "a", "")
	xmin := func() string {
		var v string
		if err := s.Pool().QueryRow(ctx, `SELECT xmin::text FROM poll_failures`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	pollFailing(t, s, "novelfull", "a", "no_chapter", 100)
	v := xmin()
	pollFailing(t, s, "novelfull", "a", "no_chapter", 200)
	if xmin() != v {
		t.Fatal("an identical failure rewrote the row")
	}
	pollFailing(t, s, "novelfull", "a", "not_found", 300)
	if f, _ := s.GetFailure(ctx, "novelfull", "a"); f != (store.Failure{Outcome: "not_found", FailingSince: storetest.Milli(100)}) {
		t.Fatalf("got %+v", f)
	}
	if err := s.ApplyRead(ctx, "novelfull", "a", store.ReadChanges{ClearFailure: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetFailure(ctx, "novelfull", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
}

func TestTheCheckStampIsTakenOnceAndReportsAFailureRow(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	pollSeries(t, s, "novelfull", "a", "")
	failingNow, err := s.StampChecked(ctx, "novelfull", "a", time.Time{}, storetest.Milli(10), storetest.Milli(10).Add(time.Hour))
	if err != nil || failingNow {
		t.Fatalf("%v %v", failingNow, err)
	}
	if _, err := s.StampChecked(ctx, "novelfull", "a", time.Time{}, storetest.Milli(11), storetest.Milli(11).Add(time.Hour)); !errors.Is(err, store.ErrAlreadyChecked) {
		t.Fatalf("a second stamp for the same due reading: %v", err)
	}
	pollFailing(t, s, "novelfull", "a", "errors", 10)
	if f, err := s.StampChecked(ctx, "novelfull", "a", storetest.Milli(10), storetest.Milli(20), storetest.Milli(20).Add(time.Hour)); err != nil || !f {
		t.Fatalf("%v %v", f, err)
	}
}

func TestSightingsCorrectionsAndAttribution(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	for _, id := range []string{"r1", "r2"} {
		if err := s.UpsertReader(ctx, store.Reader{DiscordID: id}, storetest.Milli(1)); err != nil {
			t.Fatal(err)
		}
	}
	pollSeries(t, s, "novelfull", "a", "latest_chapter_num = 9, polled_chapter_num = 9")
	pollFailing(t, s, "novelfull", "a", "no_chapter", 5)
	get := func() store.Series {
		v, err := s.GetSeries(ctx, "novelfull", "a")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	steps := []struct {
		name   string
		do     func() (bool, error)
		want   string
		wantBy string
	}{
		{"a Sighting above raises and records the Reader",
			func() (bool, error) {
				return s.RaiseLatest(ctx, "novelfull", "a", "10", "u10", "r1", storetest.Milli(5))
			}, "10", "r1"},
		{"a Sighting at the number changes nothing",
			func() (bool, error) {
				return s.RaiseLatest(ctx, "novelfull", "a", "10", "u10b", "r2", storetest.Milli(5))
			}, "10", "r1"},
		{"a Sighting below changes nothing",
			func() (bool, error) {
				return s.RaiseLatest(ctx, "novelfull", "a", "9.5", "u9", "r2", storetest.Milli(5))
			}, "10", "r1"},
		{"10.5 is above 10 as a number",
			func() (bool, error) {
				return s.RaiseLatest(ctx, "novelfull", "a", "10.5", "u105", "r2", storetest.Milli(5))
			}, "10.5", "r2"},
		{"the owner's Correction sets the number, even downwards, and clears nothing",
			func() (bool, error) { return true, s.CorrectLatestChapter(ctx, "novelfull", "a", "8") }, "8", "r2"},
		{"clearing the attribution is its own act",
			func() (bool, error) { return true, s.ClearAttribution(ctx, "novelfull", "a") }, "8", ""},
	}
	for _, st := range steps {
		if _, err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		v := get()
		by := ""
		if v.LatestRaisedBy != nil {
			by = *v.LatestRaisedBy
		}
		if v.LatestChapter == nil || *v.LatestChapter != st.want || by != st.wantBy {
			t.Fatalf("%s: latest %v by %q", st.name, v.LatestChapter, by)
		}
	}
	if f, err := s.GetFailure(ctx, "novelfull", "a"); err != nil || !f.FailingSince.Equal(storetest.Milli(5)) {
		t.Fatalf("a Sighting or Correction touched the failure row: %+v %v", f, err)
	}
	if err := s.CorrectLatestChapter(ctx, "novelfull", "missing", "1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("correcting a missing Series: %v", err)
	}
}

func TestASightingFarAboveWhatThePageShowedIsRefused(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	if err := s.UpsertReader(ctx, store.Reader{DiscordID: "r1"}, storetest.Milli(1)); err != nil {
		t.Fatal(err)
	}
	// A Poll read 271 on the page (issue 22, item 11).
	pollSeries(t, s, "novelfull", "a", "latest_chapter_num = 271, polled_chapter_num = 271")
	latest := func() string {
		t.Helper()
		v, err := s.GetSeries(ctx, "novelfull", "a")
		if err != nil || v.LatestChapter == nil {
			t.Fatalf("%+v %v", v, err)
		}
		return *v.LatestChapter
	}
	for _, num := range []string{"9999999", "321.5"} {
		raised, err := s.RaiseLatest(ctx, "novelfull", "a", num, "", "r1", storetest.Milli(5))
		var imp *store.ImplausibleError
		if !errors.As(err, &imp) || imp.Bound != "321" || raised {
			t.Fatalf("a Sighting of %s above a page that showed 271: raised %v, %v", num, raised, err)
		}
		if got := latest(); got != "271" {
			t.Fatalf("a refused Sighting of %s moved Latest Chapter to %s", num, got)
		}
	}
	if raised, err := s.RaiseLatest(ctx, "novelfull", "a", "321", "", "r1", storetest.Milli(5)); err != nil || !raised || latest() != "321" {
		t.Fatalf("a Sighting at the bound: raised %v, %v, latest %s", raised, err, latest())
	}
	// A Series no read has shown a number for has no bound to check: a
	// lone Sighting there counts for its Reader only, and Latest Chapter
	// stays as it was (TestAnUnreadPagesSightingCountsForItsReaderOnly).
	pollSeries(t, s, "novelfull", "b", "")
	if v, err := s.Sight(ctx, "novelfull", "b", "9999999", "", "r1", storetest.Milli(5)); err != nil || v.Raised || !v.OnlyYours {
		t.Fatalf("a Sighting on a Series no read showed a number for: %+v %v", v, err)
	}
	if v, err := s.GetSeries(ctx, "novelfull", "b"); err != nil || v.LatestChapter != nil {
		t.Fatalf("a lone unbounded Sighting set Latest Chapter: %+v %v", v, err)
	}
}

func TestThePlans(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	pool := s.Pool()
	var series []storetest.Series
	var failures []storetest.Failure
	for i := 1; i <= 10000; i++ {
		checked := int64(1000000 + i*1000)
		r := storetest.Series{Site: word.Sites[i%6], ID: "s" + strconv.Itoa(i), URL: "https://x/" + strconv.Itoa(i), Kind: word.Manga,
			CheckedAt: storetest.Milli(checked), CreatedAt: storetest.Milli(1)}
		if i%10 == 0 {
			r.FinishedAt = storetest.Milli(5)
		}
		if i%500 == 0 {
			r.ForcePollAt = storetest.Milli(9999999999)
		}
		series = append(series, r)
		if checked%4000 < 2000 {
			f := storetest.Failure{Site: r.Site, Series: r.ID, Outcome: word.NoChapter, FailingSince: r.CheckedAt}
			if checked%3000 == 0 {
				f.Outcome = word.Errors
			}
			failures = append(failures, f)
		}
	}
	passes := make([]storetest.Pass, 20000)
	for i := range passes {
		passes[i] = storetest.Pass{Site: word.Sites[(i+1)%6], StartedAt: storetest.Milli(int64(i+1) * 60000)}
	}
	storetest.Insert(t, pool, series...)
	storetest.Insert(t, pool, passes...)
	storetest.Insert(t, pool, failures...)
	// The scheduler's columns as a running server has them: most Series
	// bookmarked and scheduled, a few listed or sighted, and a day of
	// arrivals.
	for _, q := range []string{
		`UPDATE series SET bookmark_count = 1, next_read_at = checked_at + interval '1 hour' WHERE series_id NOT LIKE '%7'`,
		`UPDATE series SET listed_at = checked_at + interval '1 minute', listed_chapter_num = 2 WHERE series_id LIKE '%11'`,
		`UPDATE series SET sighted_at = checked_at + interval '1 minute' WHERE series_id LIKE '%23'`,
		// A few numbers a Reader raised (migration 0020's index holds them).
		`INSERT INTO readers (discord_id, name, created_at) VALUES ('r1', 'Reader One', now())`,
		`UPDATE series SET latest_chapter_num = 9, latest_raised_by = 'r1', polled_chapter_num = 5 WHERE series_id LIKE '%23'`,
		`UPDATE series SET latest_chapter_num = 5, polled_chapter_num = 5 WHERE series_id NOT LIKE '%23'`,
		`INSERT INTO chapter_arrivals (site, series_id, chapter_num, confirmed_at, noticed_at)
		 SELECT site, series_id, 1, checked_at, checked_at FROM series WHERE checked_at IS NOT NULL`,
		// Bookmarks on a tenth of the Series, for the removal's statements.
		`INSERT INTO bookmarks (reader_id, site, series_id, created_at, updated_at)
		 SELECT 'r1', site, series_id, now(), now() FROM series WHERE series_id LIKE '%9'`,
		// Own Sightings (migration 0033) on a tenth of the Series, by the
		// bookmarking Reader and by others.
		`INSERT INTO readers (discord_id, name, created_at) SELECT 'o' || g, 'Other', now() FROM generate_series(1, 20) g`,
		`INSERT INTO own_sightings (site, series_id, reader_id, chapter_num, sighted_at)
		 SELECT site, series_id, r, 7, now() FROM series, unnest(ARRAY['r1', 'o1', 'o2', 'o3']) r WHERE series_id LIKE '%3'`,
		`INSERT INTO bookmarks (reader_id, site, series_id, created_at, updated_at)
		 SELECT 'o1', site, series_id, now(), now() FROM series WHERE series_id LIKE '%03'`,
		// Eight days of the failing history: as many rows as it ever holds.
		`INSERT INTO failing_history (site, at, failing)
		 SELECT site, timestamptz 'epoch' + h * interval '1 hour', h % 5 FROM (SELECT DISTINCT site FROM series) s, generate_series(1, 192) h`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	plan := func(sql string, args ...any) string {
		rows, err := pool.Query(ctx, "EXPLAIN "+sql, args...)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	unverified := func(q store.SeriesQuery) string {
		b := s.NewBatch()
		var n int64
		if err := b.CountAdminSeries(q, storetest.Milli(9000000), &n); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, st := range store.QueuedStatements(b) {
			out = append(out, plan(st.SQL, st.Args...))
		}
		return strings.Join(out, "\n")
	}
	// yields is the yields-no-chapter list page (list) or its caption count,
	// with every failure row past the cutoff, as when a Site's adapter broke
	// (the list the notice links to holds more than half of the Site).
	yields := func(q store.SeriesQuery, list bool) string {
		b := s.NewBatch()
		now := storetest.Milli(20000000).Add(word.OwnerWindow)
		var err error
		if list {
			err = b.ListAdminSeries(q, now, &store.AdminSeriesPage{})
		} else {
			var n int64
			err = b.CountAdminSeries(q, now, &n)
		}
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, st := range store.QueuedStatements(b) {
			out = append(out, plan(st.SQL, st.Args...))
		}
		return strings.Join(out, "\n")
	}
	landingPlan := func() string {
		b := s.NewBatch()
		b.Landing(storetest.Milli(98000000), &store.LandingFigures{})
		q := store.QueuedStatements(b)[0]
		return plan(q.SQL, q.Args...)
	}
	cases := []struct {
		name  string
		plan  string
		needs []string
	}{
		// The list the adapter-broken notice links to reads one of the
		// condition's two indexes: its own in key order (a deep page, or
		// every Site), or series_no_chapter_since by age where a Site holds
		// few such rows (a sort of those few). TestEveryFigureIsBounded holds
		// every page and count of it to its bound.
		{"the yields-no-chapter list of one Site reads a no_chapter index", yields(store.SeriesQuery{Filter: store.FilterYieldsNoChapter, Site: "comix"}, true),
			[]string{"Index Scan using series_", "no_chapter"}},
		{"of every Site, its own", yields(store.SeriesQuery{Filter: store.FilterYieldsNoChapter}, true),
			[]string{"series_yields_no_chapter"}},
		{"and a deep page, its own", yields(store.SeriesQuery{Filter: store.FilterYieldsNoChapter, Site: "comix", AfterSite: "comix", AfterID: "s5000"}, true),
			[]string{"series_yields_no_chapter"}},
		{"its caption count reads a no_chapter index", yields(store.SeriesQuery{Filter: store.FilterYieldsNoChapter, Site: "comix"}, false),
			[]string{"no_chapter"}},
		// A Sighting (issue 22, item 11): its bound and its raise are read
		// and written through the primary key; a read that shows more than
		// before is one primary-key update.
		{"a Sighting's raise reads the primary key", plan(store.RaiseLatestSQL, "comix", "s23", "7", "", "r1",
			storetest.Milli(9000000), 50), []string{"series_pkey"}},
		{"a Sighting reads the Series' own Sightings by their key", plan(store.RaiseLatestSQL, "comix", "s23", "7", "", "r1",
			storetest.Milli(9000000), 50), []string{"own_sightings_pkey"}},
		{"a Reader's list reads their own Sightings by key", plan(store.BookmarksSQL, "o1", false, "", 0),
			[]string{"bookmarks_pkey", "own_sightings_pkey"}},
		{"a read that shows more updates through the primary key", plan(store.PollSeenSQL, "comix", "s23", "7"),
			[]string{"series_pkey"}},
		// Its list pages are held to their bound by TestEveryFigureIsBounded.
		{"the unverified count reads its index", unverified(store.SeriesQuery{Filter: store.FilterUnverified, Site: "comix"}),
			[]string{"series_unverified"}},
		{"on every Site too", unverified(store.SeriesQuery{Filter: store.FilterUnverified}),
			[]string{"series_unverified"}},
		{"the due query reads one partial index per rank", plan(store.DueSeriesSQL, "comix",
			storetest.Milli(2000000), storetest.Milli(1000000), storetest.Milli(1500000), 4),
			[]string{"series_forced", "series_sighted", "series_listed", "series_next"}},
		// The pass log's due (what a pass owed at its start): the same arms,
		// each on its index, cut to the cap; never a scan of the Lane.
		{"the due count reads one partial index per rank", plan(store.CountDueSQL, "comix",
			storetest.Milli(2000000), storetest.Milli(1000000), storetest.Milli(1500000), store.DueCap+1),
			[]string{"series_forced", "series_sighted", "series_listed", "series_next", "Limit"}},
		{"the next due is two index probes", plan(store.NextDueSQL, "comix", 3600.0),
			[]string{"series_next", "series_ahead_checked"}},
		{"a listing page marks through the primary key", plan(store.MarkListedSQL, "comix",
			[]string{"a", "b"}, []string{"1", "2"}, storetest.Milli(2000000)),
			[]string{"series_pkey"}},
		{"the arrivals prune walks its index", plan(store.PruneArrivals, "comix", storetest.Milli(6000000)),
			[]string{"chapter_arrivals_site_confirmed"}},
		// The detail page names an unreachable last Poll from the pass that
		// held it (docs/adr/0022): one backward step of the pass log's index.
		{"the detail page finds its last pass by the pass log's index", plan(store.AdminSeriesSQL,
			pgx.NamedArgs{"site": "comix", "id": "s23", "cutoff": storetest.Milli(9000000)}),
			[]string{"series_pkey", "poll_passes_site_started"}},
		// The retention delete (ADR 0024) walks the orphans' own index.
		{"the orphans' retention delete walks their index", plan(store.DeleteOrphans, "comix", time.Now().Add(time.Hour), store.OrphanBatch),
			[]string{"series_orphaned"}},
		// The owner's removal (issue 24, item 1) finds the Series' Bookmarks
		// by their index.
		{"the removal's notes read the Bookmarks' index", plan(store.NoteRemovedSQL, "comix", "s29", "T", time.Now()),
			[]string{"bookmarks_series"}},
		{"the removal's Bookmark delete reads their index", plan(store.DropBookmarksSQL, "comix", "s29"),
			[]string{"bookmarks_series"}},
		// The address correction (issue 24, item 2) moves one Series'
		// Bookmarks, read by their index.
		{"the correction's Bookmark move reads their index", plan(store.MoveBookmarksSQL, "comix", "s29", "s30", time.Now()),
			[]string{"bookmarks_series"}},
		{"the prune walks the pass log's index", plan(store.PrunePassesSQL, "comix", storetest.Milli(6000000)),
			[]string{"poll_passes_site_started"}},
		{"the next-due probe is one index probe", plan(store.OldestCheckSQL, "comix"),
			[]string{"series_due"}},
		// The owner-notice derivations run after every pass of every Lane.
		{"the stall run reads one Site's lookback", plan(store.StallRunSQL, "comix", storetest.Milli(1000000000), storetest.Milli(500000000)),
			[]string{"poll_passes_site_started"}},
		{"the refusing run reads one Site's lookback", plan(store.RefusingRunSQL, "comix", storetest.Milli(1000000000), storetest.Milli(500000000)),
			[]string{"poll_passes_site_started"}},
		{"sidecar-down reads the browser Sites' lookback", plan(store.SidecarDownSQL, []string{"comix", "kagane"}, storetest.Milli(1000000000), storetest.Milli(500000000)),
			[]string{"poll_passes_site_started"}},
		{"adapter-broken reads the Site's tally and its no_chapter rows", plan(store.AdapterBroken, "comix"),
			[]string{"site_tallies_pkey", "series_no_chapter_since"}},
		// The pictures (issue 23, item 11): the Lanes page's strips read the
		// day of every Site's pass log by its index; the hourly record
		// counts the Site's failing list by its own index and prunes its
		// history by the primary key.
		{"the pass strips read the day by the pass log's index", plan(store.PassStripSQL, word.SiteNames(),
			storetest.Milli(1200000000), 24*time.Hour), []string{"poll_passes_site_started"}},
		{"the hourly failing record reads the failing index and the history's key", plan(store.RecordFailingSQL, pgx.NamedArgs{
			"site": "comix", "sites": []string{"comix"}, "cutoff": storetest.Milli(9000000), "cap": store.FigureCap + 1,
			"hour": storetest.Milli(9000000), "keep": storetest.Milli(1000000)}),
			[]string{"series_failing", "failing_history_pkey"}},
		{"the failing line reads the history", plan(store.FailingHistorySQL, pgx.NamedArgs{"sites": word.SiteNames(), "now": storetest.Milli(9000000), "history": 7 * 24 * time.Hour}),
			[]string{"failing_history"}},
		// /admin's one statement of figures reads each by its index; its
		// freshness figure is the Lanes' kept row, and the Arrivals only
		// when none kept it, by their index of the window (after this
		// data's arrivals: the window the planner sees is a day of them).
		// Its figures' own bound is TestEveryFigureIsBounded's, over
		// 30 000 Series: on this data the planner scans series for them.
		{"the landing's figures read their indexes", strings.ReplaceAll(landingPlan(), "Seq Scan on series s", "figure on series s"),
			[]string{"series_failing_young", "poll_lanes", "failing_history_pkey", "freshness_figure",
				"chapter_arrivals_confirmed"}},
		{"the freshness figure's refresh reads the window by its index", plan(store.RefreshFreshnessSQL, pgx.NamedArgs{
			"due": storetest.Milli(97000000), "now": storetest.Milli(98000000), "window": store.FreshnessWindow}),
			[]string{"chapter_arrivals_confirmed"}},
		// The metrics' gauges (issue 25, item 5), read at every scrape:
		// each Site's newest pass is one backward index step, its oldest
		// read one probe of series_due.
		{"the metrics' due gauge steps back the pass log's index", plan(store.NewestDueSQL, word.SiteNames()),
			[]string{"poll_passes_site_started"}},
		{"the metrics' oldest read probes series_due", plan(store.OldestChecksSQL, word.SiteNames()),
			[]string{"series_due"}},
	}
	for _, c := range cases {
		for _, n := range c.needs {
			if !strings.Contains(c.plan, n) {
				t.Errorf("%s: plan lacks %s:\n%s", c.name, n, c.plan)
			}
		}
		// lane_leases holds one row per Site, six at most (ADR 0018): a
		// scan of it is bounded by construction.
		// failing_history holds at most 6 × 192 rows (each Lane prunes its
		// Site's past eight days as it writes, migration 0024), and the
		// line reads seven of those eight days: a scan of it is bounded too.
		// The detail page joins readers on its primary key; the planner
		// scans this test's one-row readers table instead.
		// freshness_figure holds one row (migration 0035), poll_lanes one
		// a Site (the landing reads each Lane's reach from it).
		scans := strings.NewReplacer("Seq Scan on lane_leases", "", "Seq Scan on failing_history", "",
			"Seq Scan on readers r", "", "Seq Scan on freshness_figure", "", "Seq Scan on poll_lanes", "").Replace(c.plan)
		if strings.Contains(scans, "Seq Scan") {
			t.Errorf("%s: sequential scan:\n%s", c.name, c.plan)
		}
	}
}

func TestTheLaneLockIsExclusiveAndItsSessionHearsItsOwnWakes(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	lock, _, err := s.TryLockLane(ctx, "comix", store.LeaseAsk{Holder: "a", TTL: time.Minute})
	if err != nil || lock == nil {
		t.Fatalf("first lock: %v %v", lock, err)
	}
	other, left, err := s.TryLockLane(ctx, "comix", store.LeaseAsk{Holder: "b", TTL: time.Minute})
	if err != nil || other != nil {
		t.Fatalf("another holder took a held lease: %v %v", other, err)
	}
	if left < 50*time.Second || left > time.Minute {
		t.Fatalf("the held lease has %v left, want about a minute", left)
	}
	if other, _, err := s.TryLockLane(ctx, "kagane", store.LeaseAsk{Holder: "b", TTL: time.Minute}); err != nil || other == nil {
		t.Fatalf("another Site's lock: %v %v", other, err)
	} else {
		other.Release()
	}

	// Waits that time out leave the session usable.
	for range 3 {
		wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		err := lock.WaitWake(wctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("an idle wait: %v", err)
		}
	}
	if err := lock.Renew(ctx); err != nil {
		t.Fatalf("lease not renewed after timed-out waits: %v", err)
	}

	// A wake for another Site is skipped; one for this Site ends the wait,
	// even when it was sent before the wait began.
	if err := s.ForceLanePoll(ctx, "kagane", storetest.Milli(1)); err != nil {
		t.Fatal(err)
	}
	if err := s.PauseLane(ctx, "comix", storetest.Milli(5), storetest.Milli(1)); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := lock.WaitWake(wctx); err != nil {
		t.Fatalf("the wake was not heard: %v", err)
	}

	lock.Release()
	again, _, err := s.TryLockLane(ctx, "comix", store.LeaseAsk{Holder: "b", TTL: time.Minute})
	if err != nil || again == nil {
		t.Fatalf("the released lease was not free: %v %v", again, err)
	}
	again.Release()
}

// A lease belongs to its holder, not to a session: the holder takes it back
// at once whatever became of its sessions, while another holder waits for
// its expiry; a holder that stops renewing (it vanished) loses the Lane at
// the expiry, and learns so on its next renewal (ADR 0018).
func TestALaneLeaseIsTheHoldersUntilItExpires(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	const ttl = 400 * time.Millisecond
	a, _, err := s.TryLockLane(ctx, "comix", store.LeaseAsk{Holder: "a", TTL: ttl})
	if err != nil || a == nil {
		t.Fatalf("first lock: %v %v", a, err)
	}
	defer a.Release()
	// The same holder asking again (its sessions were cut) gets it.
	again, _, err := s.TryLockLane(ctx, "comix", store.LeaseAsk{Holder: "a", TTL: ttl})
	if err != nil || again == nil {
		t.Fatalf("the holder could not take its own lease back: %v %v", again, err)
	}
	// a's renewer keeps the lease past its time while a lives.
	time.Sleep(2 * ttl)
	if b, _, err := s.TryLockLane(ctx, "comix", store.LeaseAsk{Holder: "b", TTL: ttl}); err != nil || b != nil {
		t.Fatalf("a living holder's lease was taken: %v %v", b, err)
	}
	// a vanishes: nobody renews its lease (the test stops both renewers
	// without ending the lease, as a suspended host would).
	a.StopRenewing()
	again.StopRenewing()
	var b *store.LaneLock
	deadline := time.Now().Add(3 * ttl)
	for b == nil && time.Now().Before(deadline) {
		var left time.Duration
		b, left, err = s.TryLockLane(ctx, "comix", store.LeaseAsk{Holder: "b", TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(left + 10*time.Millisecond)
	}
	if b == nil {
		t.Fatal("the vanished holder's lease was not taken within its time")
	}
	defer b.Release()
	if err := a.Renew(ctx); !errors.Is(err, store.ErrLaneLost) || !a.Lost() {
		t.Fatalf("the old holder's renewal: %v, lost %v", err, a.Lost())
	}
}

func TestTheOwnersLaneControlsRefuseAnUnknownSite(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	for name, err := range map[string]error{
		"force lane":  s.ForceLanePoll(ctx, "nowhere", storetest.Milli(1)),
		"pause":       s.PauseLane(ctx, "nowhere", storetest.Milli(1), storetest.Milli(1)),
		"resume":      s.ResumeLane(ctx, "nowhere"),
		"force poll":  s.ForceSeriesPoll(ctx, "novelfull", "missing", storetest.Milli(1)),
		"clear":       s.ClearAttribution(ctx, "novelfull", "missing"),
		"set refusal": s.SetLaneRefusal(ctx, "nowhere", storetest.Milli(1)),
	} {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestAReadThatChangesSeveralThingsLandsWholeOrNotAtAll: ApplyRead runs more
// than one write in one transaction, so a write that fails takes the others
// back with it and the Series keeps what it had.
func TestAReadThatChangesSeveralThingsLandsWholeOrNotAtAll(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	pollSeries(t, s, "novelfull", "a", "")
	pollFailing(t, s, "novelfull", "a", "no_chapter", 100)
	bad := store.ReadChanges{ClearFailure: true, Face: true, Title: "New", Latest: true, LatestNum: "not a number"}
	if err := s.ApplyRead(ctx, "novelfull", "a", bad); err == nil {
		t.Fatal("a read with an unwritable number was applied")
	}
	if _, err := s.GetFailure(ctx, "novelfull", "a"); err != nil {
		t.Fatalf("the failure row went with a read that did not land: %v", err)
	}
	if got, _ := s.GetSeries(ctx, "novelfull", "a"); got.Title == "New" {
		t.Fatal("the title changed with a read that did not land")
	}
	good := store.ReadChanges{ClearFailure: true, Face: true, Title: "New", Latest: true, LatestNum: "12.5"}
	if err := s.ApplyRead(ctx, "novelfull", "a", good); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetSeries(ctx, "novelfull", "a")
	if _, err := s.GetFailure(ctx, "novelfull", "a"); !errors.Is(err, store.ErrNotFound) || got.Title != "New" || got.LatestChapter == nil || *got.LatestChapter != "12.5" {
		t.Fatalf("the whole read did not land: %+v, failure %v", got, err)
	}
}

// A lease lives on the database's clock: a caller's clock that runs ahead
// (the demo skips hours) never makes a led Lane look un-led, and an ended
// lease's age is the database's, set back from the caller's now (ADR 0018).
func TestALaneIsUnledByItsLeasesOwnClock(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	ahead := time.Now().Add(48 * time.Hour)
	lock, _, err := s.TryLockLane(ctx, "comix", store.LeaseAsk{Holder: "a", TTL: time.Minute})
	if err != nil || lock == nil {
		t.Fatalf("lock: %v %v", lock, err)
	}
	defer lock.Release()
	if since, ok, err := s.StallRun(ctx, "comix", ahead, ahead.Add(-7*24*time.Hour)); err != nil || ok {
		t.Fatalf("a led Lane stalls on a clock two days ahead: %v %v %v", since, ok, err)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE lane_leases SET expires_at = now() - interval '13 hours'`); err != nil {
		t.Fatal(err)
	}
	since, ok, err := s.StallRun(ctx, "comix", ahead, ahead.Add(-7*24*time.Hour))
	if err != nil || !ok {
		t.Fatalf("an un-led Lane does not stall: %v %v", ok, err)
	}
	if age := ahead.Sub(since); age < 13*time.Hour || age > 13*time.Hour+time.Minute {
		t.Fatalf("un-led for %v, want 13 hours", age)
	}
	if sites, err := s.UnledLanes(ctx, 12*time.Hour); err != nil || len(sites) != 1 || sites[0] != "comix" {
		t.Fatalf("un-led Lanes past 12 h: %v %v", sites, err)
	}
}
