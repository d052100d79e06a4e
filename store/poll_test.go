package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

var now = time.Date(2026, 8, 21, 8, 0, 0, 0, time.UTC)

func ago(d time.Duration) int64 { return now.Add(-d).UnixMilli() }

// fixture creates a Series and sets columns on it directly.
func fixture(t *testing.T, s *store.Store, site, id, set string, args ...any) {
	t.Helper()
	ctx := context.Background()
	if err := s.CreateSeries(ctx, store.Series{Site: site, SeriesID: id, URL: "https://novelfull.com/" + id + ".html", Kind: "novel"}, 1); err != nil {
		t.Fatal(err)
	}
	if set != "" {
		args = append([]any{site, id}, args...)
		if _, err := s.Pool().Exec(ctx, `UPDATE series SET `+set+` WHERE site = $1 AND series_id = $2`, args...); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
	}
}

func failing(t *testing.T, s *store.Store, site, id, outcome string, since int64) {
	t.Helper()
	if err := s.RecordFailure(context.Background(), site, id, outcome, since); err != nil {
		t.Fatal(err)
	}
}

func ids(rows []store.SeriesRow) []string {
	var v []string
	for _, r := range rows {
		v = append(v, r.SeriesID)
	}
	return v
}

func TestTheFailureFiltersSelectTheirSeriesAndNoOthers(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	const nf = "novelfull"
	if err := s.UpsertReader(ctx, store.Reader{DiscordID: "reader"}, 1); err != nil {
		t.Fatal(err)
	}
	fixture(t, s, nf, "broken", "latest_chapter_num = 10, checked_at = $3", ago(time.Minute))
	failing(t, s, nf, "broken", "not_found", ago(13*time.Hour))
	fixture(t, s, nf, "raised-broken", "latest_chapter_num = 12, latest_raised_by = 'reader', checked_at = $3", ago(time.Minute))
	failing(t, s, nf, "raised-broken", "no_chapter", ago(90*24*time.Hour))
	fixture(t, s, nf, "never-worked", "checked_at = $3", ago(time.Minute))
	failing(t, s, nf, "never-worked", "no_chapter", ago(13*time.Hour))
	fixture(t, s, nf, "broke-an-hour-ago", "latest_chapter_num = 10, latest_raised_by = 'reader', checked_at = $3", ago(time.Minute))
	failing(t, s, nf, "broke-an-hour-ago", "errors", ago(time.Hour))
	fixture(t, s, nf, "finished-broken", "latest_chapter_num = 3, finished_at = $3, checked_at = $3", ago(time.Hour))
	failing(t, s, nf, "finished-broken", "not_found", ago(13*time.Hour))
	fixture(t, s, nf, "raised-healthy", "latest_chapter_num = 4, latest_raised_by = 'reader', checked_at = $3", ago(time.Minute))
	fixture(t, s, nf, "completed", "latest_chapter_num = 5, site_completed_at = $3, checked_at = $3", ago(time.Minute))
	fixture(t, s, nf, "finished-completed", "latest_chapter_num = 5, site_completed_at = $3, finished_at = $3, checked_at = $3", ago(time.Minute))
	fixture(t, s, "comix", "elsewhere", "latest_chapter_num = 1, checked_at = $3", ago(time.Minute))
	failing(t, s, "comix", "elsewhere", "errors", ago(13*time.Hour))

	cases := []struct {
		name   string
		filter store.Filter
		site   string
		want   []string
	}{
		{"failing holds Series failing over twelve hours that once had a chapter, finished or not", store.FilterFailing, nf,
			[]string{"broken", "finished-broken", "raised-broken"}},
		{"unverified is the failing subset whose number a Reader raised", store.FilterUnverified, nf,
			[]string{"raised-broken"}},
		{"no-chapter holds the Series that never once yielded a chapter", store.FilterNoChapter, nf,
			[]string{"never-worked"}},
		{"site-completed leaves out a finished Series", store.FilterSiteCompleted, nf,
			[]string{"completed"}},
		{"finished holds the finished Series", store.FilterFinished, nf,
			[]string{"finished-broken", "finished-completed"}},
		{"the site parameter narrows failing", store.FilterFailing, "comix",
			[]string{"elsewhere"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows, err := s.AdminSeries(ctx, c.filter, c.site, "", now)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(rows); !slices.Equal(got, c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}

	failingRows, _ := s.AdminSeries(ctx, store.FilterFailing, "", "", now)
	noChapter, _ := s.AdminSeries(ctx, store.FilterNoChapter, "", "", now)
	for _, id := range ids(noChapter) {
		if slices.Contains(ids(failingRows), id) {
			t.Fatalf("%s is in both no-chapter and failing", id)
		}
	}
}

func TestTheAdminJoinProjectsTheOutcomeWordAndTheAge(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	fixture(t, s, "novelfull", "a", "")
	fixture(t, s, "novelfull", "b", "")
	failing(t, s, "novelfull", "a", "not_found", ago(3*time.Hour))
	rows, err := s.AdminSeries(context.Background(), store.FilterAll, "novelfull", "novel", now)
	if err != nil || len(rows) != 2 {
		t.Fatalf("%v %v", rows, err)
	}
	a, b := rows[0], rows[1]
	if a.FailureOutcome == nil || *a.FailureOutcome != "not_found" || a.FailingSince == nil || *a.FailingSince != ago(3*time.Hour) {
		t.Fatalf("a: %+v", a)
	}
	if b.FailureOutcome != nil || b.FailingSince != nil {
		t.Fatalf("b has a failure it never had: %+v", b)
	}
	if _, err := s.AdminSeries(context.Background(), store.Filter("; DROP TABLE series"), "", "", now); err == nil {
		t.Fatal("an unknown filter word was accepted")
	}
}

// counter counts the statements a pool runs.
type counter struct {
	mu  sync.Mutex
	sql []string
}

func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sql = append(c.sql, d.SQL)
	return ctx
}
func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func TestDeletingAnOrphanIsOneStatementThatCascadesItsFailureRow(t *testing.T) {
	t.Parallel()
	c := &counter{}
	s := store.New(storetest.Pool(t, func(cfg *pgxpool.Config) { cfg.ConnConfig.Tracer = c }))
	ctx := context.Background()
	fixture(t, s, "novelfull", "orphan", "")
	failing(t, s, "novelfull", "orphan", "not_found", 5)
	c.mu.Lock()
	c.sql = nil
	c.mu.Unlock()
	if err := s.DeleteSeries(ctx, "novelfull", "orphan"); err != nil {
		t.Fatal(err)
	}
	if len(c.sql) != 1 {
		t.Fatalf("%d statements: %q", len(c.sql), c.sql)
	}
	if _, err := s.GetFailure(ctx, "novelfull", "orphan"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("failure row survived its Series: %v", err)
	}
}

func TestTheFailureWriteKeepsItsAgeAndWritesNothingOnARepeat(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	fixture(t, s, "novelfull", "a", "")
	xmin := func() string {
		var v string
		if err := s.Pool().QueryRow(ctx, `SELECT xmin::text FROM poll_failures`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	failing(t, s, "novelfull", "a", "no_chapter", 100)
	v := xmin()
	failing(t, s, "novelfull", "a", "no_chapter", 200)
	if xmin() != v {
		t.Fatal("an identical failure rewrote the row")
	}
	failing(t, s, "novelfull", "a", "not_found", 300)
	if f, _ := s.GetFailure(ctx, "novelfull", "a"); f != (store.Failure{Outcome: "not_found", FailingSince: 100}) {
		t.Fatalf("got %+v", f)
	}
	if err := s.ClearFailure(ctx, "novelfull", "a"); err != nil {
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
	fixture(t, s, "novelfull", "a", "")
	failingNow, err := s.StampChecked(ctx, "novelfull", "a", 0, 10)
	if err != nil || failingNow {
		t.Fatalf("%v %v", failingNow, err)
	}
	if _, err := s.StampChecked(ctx, "novelfull", "a", 0, 11); !errors.Is(err, store.ErrAlreadyChecked) {
		t.Fatalf("a second stamp for the same due reading: %v", err)
	}
	failing(t, s, "novelfull", "a", "errors", 10)
	if f, err := s.StampChecked(ctx, "novelfull", "a", 10, 20); err != nil || !f {
		t.Fatalf("%v %v", f, err)
	}
}

func TestSightingsCorrectionsAndAttribution(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	for _, id := range []string{"r1", "r2"} {
		if err := s.UpsertReader(ctx, store.Reader{DiscordID: id}, 1); err != nil {
			t.Fatal(err)
		}
	}
	fixture(t, s, "novelfull", "a", "latest_chapter_num = 9")
	failing(t, s, "novelfull", "a", "no_chapter", 5)
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
			func() (bool, error) { return s.RaiseLatest(ctx, "novelfull", "a", "10", "u10", "r1") }, "10", "r1"},
		{"a Sighting at the number changes nothing",
			func() (bool, error) { return s.RaiseLatest(ctx, "novelfull", "a", "10", "u10b", "r2") }, "10", "r1"},
		{"a Sighting below changes nothing",
			func() (bool, error) { return s.RaiseLatest(ctx, "novelfull", "a", "9.5", "u9", "r2") }, "10", "r1"},
		{"10.5 is above 10 as a number",
			func() (bool, error) { return s.RaiseLatest(ctx, "novelfull", "a", "10.5", "u105", "r2") }, "10.5", "r2"},
		{"the owner's Correction sets the number, even downwards, and clears nothing",
			func() (bool, error) { return true, s.CorrectLatest(ctx, "novelfull", "a", "8", "u8") }, "8", "r2"},
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
	if f, err := s.GetFailure(ctx, "novelfull", "a"); err != nil || f.FailingSince != 5 {
		t.Fatalf("a Sighting or Correction touched the failure row: %+v %v", f, err)
	}
	if err := s.CorrectLatest(ctx, "novelfull", "missing", "1", ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("correcting a missing Series: %v", err)
	}
}

func TestThePlans(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	pool := s.Pool()
	for _, q := range []string{
		`INSERT INTO series (site, series_id, url, kind, checked_at, created_at, finished_at, force_poll_at)
		 SELECT (ARRAY['asurascans','demonicscans','comix','kagane','novelfull','lightnovelworld'])[1 + i % 6],
		        's' || i, 'https://x/' || i, 'manga', 1000000 + i * 1000, 1,
		        CASE WHEN i % 10 = 0 THEN 5 ELSE 0 END, CASE WHEN i % 500 = 0 THEN 9999999999 ELSE 0 END
		 FROM generate_series(1, 10000) i`,
		`INSERT INTO poll_passes (site, started_at, finished_at)
		 SELECT (ARRAY['asurascans','demonicscans','comix','kagane','novelfull','lightnovelworld'])[1 + i % 6], i * 60000, i * 60000
		 FROM generate_series(1, 20000) i`,
		`ANALYZE`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
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
	cases := []struct {
		name  string
		plan  string
		needs []string
	}{
		{"the due query reads both partial indexes", plan(store.DueSeriesSQL, "comix", 2000000, nil),
			[]string{"series_due", "series_forced"}},
		{"the prune walks the pass log's index", plan(store.PrunePassesSQL, "comix", 6000000),
			[]string{"poll_passes_site_started"}},
		{"the next-due probe is one index probe", plan(store.OldestCheckSQL, "comix"),
			[]string{"series_due"}},
	}
	for _, c := range cases {
		for _, n := range c.needs {
			if !strings.Contains(c.plan, n) {
				t.Errorf("%s: plan lacks %s:\n%s", c.name, n, c.plan)
			}
		}
		if strings.Contains(c.plan, "Seq Scan") {
			t.Errorf("%s: sequential scan:\n%s", c.name, c.plan)
		}
	}
}
