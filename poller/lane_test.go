package poller_test

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// notes records the Notifier's calls and, at each call, whether the pass's
// row was already in the log.
type notes struct {
	mu    sync.Mutex
	calls []string
}

func (n *notes) hook(st *store.Store) func(context.Context, string, time.Time) error {
	return func(ctx context.Context, s string, at time.Time) error {
		rows, err := st.ListPasses(ctx, s, at)
		logged := err == nil && len(rows) > 0 && rows[len(rows)-1].StartedAt.Equal(at)
		n.mu.Lock()
		defer n.mu.Unlock()
		n.calls = append(n.calls, fmt.Sprintf("%s logged=%v", s, logged))
		return fmt.Errorf("webhook down") // logged, never fatal
	}
}

func (n *notes) reset() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls = nil
}

// second opens another pool on the rig's database: a second process.
func (r *rig) second() *store.Store {
	r.t.Helper()
	cfg, err := pgxpool.ParseConfig(r.pool.Config().ConnString())
	if err != nil {
		r.t.Fatal(err)
	}
	store.Tune(cfg) // as every process's pools are (store.Open)
	pool, err := pgxpool.NewWithConfig(r.ctx, cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(pool.Close)
	return store.New(pool)
}

func TestEverySkipPathWritesItsOwnValue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		skip  word.Skip
		site  string
		setup func(r *rig)
	}{
		{word.SkipNotLeader, site, func(r *rig) {
			other := r.poller(r.second())
			if p := other.RunPass(r.ctx, site); p.Skip != "" {
				r.t.Fatalf("the other process did not lead: %+v", p)
			}
		}},
		{word.SkipNoLane, "nowhere", func(r *rig) {}},
		{word.SkipDBError, site, func(r *rig) { r.exec(`ALTER TABLE poll_lanes RENAME TO poll_lanes_gone`) }},
		{word.SkipPaused, site, func(r *rig) {
			if err := r.st.PauseLane(r.ctx, site, r.clk.Now().Add(3*time.Hour), r.clk.Now()); err != nil {
				r.t.Fatal(err)
			}
		}},
		{word.SkipRefusing, site, func(r *rig) {
			if err := r.st.SetLaneRefusal(r.ctx, site, r.clk.Now().Add(3*time.Hour)); err != nil {
				r.t.Fatal(err)
			}
		}},
		{word.SkipNoBrowser, "comix", func(r *rig) {
			r.rd.routes["comix"] = word.RouteBrowser
			r.rd.browser = false
		}},
		{word.SkipBrowserDown, "kagane", func(r *rig) {
			r.rd.routes["comix"] = word.RouteBrowser
			r.rd.routes["kagane"] = word.RouteBrowser
			r.seriesOn("comix", "c")
			r.seriesOn("kagane", "k")
			r.rd.script(url("c"), failResult(word.Unreachable, 0, false))
			if p := r.p.RunPass(r.ctx, "comix"); p.Counts.Unreachable != 1 {
				r.t.Fatalf("comix pass: %+v", p)
			}
		}},
		{word.SkipDueError, site, func(r *rig) { r.exec(`ALTER TABLE series RENAME TO series_gone`) }},
		{word.SkipStopped, site, func(r *rig) {
			ctx, cancel := context.WithCancel(r.ctx)
			cancel()
			r.ctx = ctx // the pass begins after shutdown
		}},
	}
	// Every Skip value is written by its own path: SkipNone by every pass
	// that ran, SkipLockError by TestALockThatCannotBeAskedForIsALockErrorNotAnotherLeader.
	covered := map[word.Skip]bool{word.SkipNone: true, word.SkipLockError: true}
	for _, c := range cases {
		covered[c.skip] = true
	}
	for _, s := range word.Skips {
		if !covered[s] {
			t.Errorf("no path is shown writing skip value %q", s)
		}
	}
	for _, c := range cases {
		t.Run("a pass skipped as "+string(c.skip)+" logs "+string(c.skip), func(t *testing.T) {
			t.Parallel()
			n := &notes{}
			r := newRig(t)
			r.with(func(cfg *poller.Config) { cfg.Notifier = n.hook(r.st) })
			r.series("s")
			c.setup(r)
			n.reset() // a pass the setup ran is not the one under test
			failedBefore := strings.Count(r.logs.String(), "notifier failed")
			readsBefore := r.rd.readsOf(url("s"))
			r.clk.Advance(time.Minute)
			pass := r.p.RunPass(r.ctx, c.site)
			r.ctx = context.Background()
			if pass.Skip != c.skip {
				t.Fatalf("skip %q, want %q", pass.Skip, c.skip)
			}
			rows := r.passes(c.site)
			last := rows[len(rows)-1]
			if last.Skip != c.skip || !last.StartedAt.Equal(r.clk.Now()) {
				t.Fatalf("pass log: %+v", last)
			}
			if r.rd.readsOf(url("s")) != readsBefore || r.rd.readsOf(url("k")) != 0 {
				t.Fatal("a skipped pass read a page")
			}
			if len(n.calls) != 1 || n.calls[0] != c.site+" logged=true" {
				t.Fatalf("notifier calls: %q (want one, after the row)", n.calls)
			}
			if strings.Count(r.logs.String(), "notifier failed") != failedBefore+1 {
				t.Fatal("the notifier's error was not logged")
			}
			if c.skip != word.SkipStopped && (pass.Rest <= 0 || pass.Rest > time.Hour) {
				t.Fatalf("rest %v outside (0, 1h]", pass.Rest)
			}
		})
	}
}

func TestAPassThatRanLogsAnEmptySkipAndEveryCount(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a", "b", "c", "d", "e")
	r.rd.script(url("b"), failResult(word.NoChapter, 200, true))
	r.rd.script(url("c"), failResult(word.NotFound, 404, true))
	r.rd.script(url("d"), failResult(word.Errors, 503, true))
	r.rd.script(url("e"), failResult(word.Refused, 403, false))
	n := &notes{}
	r.with(func(c *poller.Config) { c.Notifier = n.hook(r.st) })
	r.pass()
	row := r.passes(site)[0]
	want := store.PassRow{ID: row.ID, Site: site, StartedAt: row.StartedAt, FinishedAt: row.FinishedAt,
		Due: 5, Checked: 4, Counts: word.Counts{OK: 1, NoChapter: 1, NotFound: 1, Errors: 1, Refused: 1}}
	if row != want {
		t.Fatalf("pass log row %+v\nwant %+v", row, want)
	}
	if len(n.calls) != 1 {
		t.Fatalf("notifier calls: %q", n.calls)
	}
}

func TestTwoRefusalsBreakThePassAndTheLaneRefusesAfterwards(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		retryAfter time.Duration
		wantWait   time.Duration
	}{
		{"two challenges rest the Lane the default refusal", 0, poller.DefaultRefuseFor},
		{"a 429's longer Retry-After wins", 2 * time.Hour, 2 * time.Hour},
		{"an absurd Retry-After is bounded", 1000 * time.Hour, poller.DefaultMaxRefuse},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			r.series("a", "b", "c")
			refused := failResult(word.Refused, 429, false)
			refused.RetryAfter = c.retryAfter
			for _, id := range []string{"a", "b", "c"} {
				r.rd.script(url(id), refused)
			}
			pass := r.pass()
			if !pass.Broken || pass.Skip != "" || pass.Counts.Refused != 2 || pass.Due != 3 {
				t.Fatalf("pass: %+v", pass)
			}
			if r.rd.readsOf(url("c")) != 0 {
				t.Fatal("the pass went on after two refusals")
			}
			if row := r.passes(site)[0]; row.Skip != "" || row.Refused != 2 || row.Checked != 0 {
				t.Fatalf("pass log: %+v", row)
			}
			ln, err := r.st.GetLane(r.ctx, site)
			if err != nil {
				t.Fatal(err)
			}
			if got := ln.RefuseUntil.Sub(r.clk.Now()); got != c.wantWait {
				t.Fatalf("refuse_until is now+%v, want now+%v", got, c.wantWait)
			}
			if pass.Rest != min(c.wantWait, time.Hour) {
				t.Fatalf("rest %v", pass.Rest)
			}
			if _, ok := r.failure("a"); ok {
				t.Fatal("a refusal wrote a failure row")
			}
			r.clk.Advance(time.Minute)
			if p := r.p.RunPass(r.ctx, site); p.Skip != word.SkipRefusing {
				t.Fatalf("next pass: %+v", p)
			}
		})
	}
}

func TestOneTooManyRequestsRestsTheLaneItsRetryAfter(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a", "b")
	slow := failResult(word.Refused, 429, false)
	slow.RetryAfter = 50 * time.Minute
	r.rd.script(url("a"), slow)
	pass := r.pass()
	if pass.Broken || pass.Counts.Refused != 1 || pass.Counts.OK != 1 {
		t.Fatalf("pass: %+v", pass)
	}
	if pass.Rest < 50*time.Minute || pass.Rest > time.Hour {
		t.Fatalf("rest %v, want the Retry-After, at most an hour", pass.Rest)
	}
}

func TestAnUnreachableSidecarStopsEveryBrowserLaneButNoPlainOne(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.rd.routes["comix"] = word.RouteBrowser
	r.rd.routes["kagane"] = word.RouteBrowser
	r.with(func(c *poller.Config) { c.BrowserDownFor = 10 * time.Minute })
	for _, id := range []string{"c1", "c2", "c3"} {
		r.seriesOn("comix", id)
	}
	r.seriesOn("kagane", "k")
	r.series("n")
	r.rd.script(url("c1"), failResult(word.Unreachable, 0, false))
	r.clk.Advance(time.Hour)

	pass := r.p.RunPass(r.ctx, "comix")
	if pass.Counts.Unreachable != 1 || r.rd.readsOf(url("c2")) != 0 || pass.Skip != "" {
		t.Fatalf("comix went on polling after the sidecar went away: %+v", pass)
	}
	if pass.Rest != 5*time.Minute {
		t.Fatalf("rest %v, want half the browser-down time (the next pass lands inside it)", pass.Rest)
	}
	if p := r.p.RunPass(r.ctx, "kagane"); p.Skip != word.SkipBrowserDown {
		t.Fatalf("sibling browser Lane: %+v", p)
	}
	if p := r.p.RunPass(r.ctx, site); p.Skip != "" || p.Counts.OK != 1 {
		t.Fatalf("plain Lane: %+v", p)
	}
	r.clk.Advance(10 * time.Minute)
	if p := r.p.RunPass(r.ctx, "kagane"); p.Skip != "" || p.Counts.OK != 1 {
		t.Fatalf("kagane after browser-down ended: %+v", p)
	}
}

func TestAPanicInOnePollIsCountedAsErrorsAndTheLaneGoesOn(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a", "b", "c")
	r.rd.before = func(u string) {
		if u == url("b") {
			panic("parser fell over")
		}
	}
	pass := r.pass()
	if pass.Counts.Errors != 1 || pass.Counts.OK != 2 {
		t.Fatalf("pass: %+v", pass)
	}
	logs := r.logs.String()
	if !strings.Contains(logs, "poll panicked") || !strings.Contains(logs, "series_id=b") || !strings.Contains(logs, "site=novelfull") {
		t.Fatalf("panic not logged with its Series:\n%s", logs)
	}
	if row := r.passes(site)[0]; row.Errors != 1 || row.OK != 2 {
		t.Fatalf("pass log: %+v", row)
	}
	// errors writes (CONTEXT.md, Outcome): a page that panics the adapter every hour
	// is a failing Series, not a healthy one with a fresh check stamp.
	if f, ok := r.failure("b"); !ok || f.Outcome != "errors" || !f.FailingSince.Equal(r.clk.Now()) {
		t.Fatalf("the panicked Poll left failure row %+v present=%v; want errors since now", f, ok)
	}
	if _, ok := r.failure("a"); ok {
		t.Fatal("a healthy Poll beside the panic wrote a failure row")
	}
}

func TestAFailingSeriesIsDueAtTheSamePaceAsAHealthyOne(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("healthy", "failing")
	r.rd.script(url("failing"), failResult(word.NotFound, 404, true))
	for i := 1; i <= 3; i++ {
		pass := r.pass()
		if pass.Due != 2 {
			t.Fatalf("pass %d owed %d Series, want both", i, pass.Due)
		}
		if r.rd.readsOf(url("failing")) != i || r.rd.readsOf(url("healthy")) != i {
			t.Fatalf("pass %d: reads healthy=%d failing=%d", i, r.rd.readsOf(url("healthy")), r.rd.readsOf(url("failing")))
		}
		r.clk.Advance(-time.Minute) // 59 minutes later: nothing is due
		if p := r.p.RunPass(r.ctx, site); p.Due != 0 {
			t.Fatalf("a Series came due early: %+v", p)
		}
		r.clk.Advance(time.Minute)
	}
}

func TestTheLaneRestsUntilItsNextSeriesIsDue(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	r.pass()
	r.clk.Advance(20 * time.Minute)
	r.series("b") // never checked: due now
	r.exec(`UPDATE series SET checked_at = $1 WHERE series_id = 'b'`, storetest.Milli(r.clk.Now().Add(-70*time.Minute).UnixMilli()))
	pass := r.p.RunPass(r.ctx, site)
	if pass.Due != 1 || pass.Rest != 40*time.Minute {
		t.Fatalf("pass %+v: want one due and a 40m rest (a falls due then)", pass)
	}
	r.clk.Advance(time.Minute)
	if p := r.p.RunPass(r.ctx, "lightnovelworld"); p.Rest != time.Hour || p.Due != 0 {
		t.Fatalf("an empty Lane: %+v, want the default rest", p)
	}
}

func TestAForcedLaneMakesEverySeriesDueOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a", "b")
	r.pass()
	r.clk.Advance(time.Minute)
	if err := r.st.ForceLanePoll(r.ctx, site, r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(time.Minute)
	if p := r.p.RunPass(r.ctx, site); p.Due != 2 {
		t.Fatalf("forced Lane owed %d", p.Due)
	}
	if ln, _ := r.st.GetLane(r.ctx, site); !ln.ForcePollAt.IsZero() {
		t.Fatalf("served Lane force still pending: %+v", ln)
	}
	r.clk.Advance(time.Minute)
	if p := r.p.RunPass(r.ctx, site); p.Due != 0 {
		t.Fatalf("after the forced pass: %+v", p)
	}
}

func TestAForcedLaneOnAPausedLaneWaitsForTheResume(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	r.pass()
	if err := r.st.PauseLane(r.ctx, site, r.clk.Now().Add(24*time.Hour), r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if err := r.st.ForceLanePoll(r.ctx, site, r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(time.Minute)
	if p := r.p.RunPass(r.ctx, site); p.Skip != word.SkipPaused {
		t.Fatalf("%+v", p)
	}
	if ln, _ := r.st.GetLane(r.ctx, site); ln.ForcePollAt.IsZero() {
		t.Fatal("the unserved force request was dropped")
	}
	if err := r.st.ResumeLane(r.ctx, site); err != nil {
		t.Fatal(err)
	}
	if p := r.p.RunPass(r.ctx, site); p.Skip != "" || p.Due != 1 {
		t.Fatalf("%+v", p)
	}
}

// waitFor polls cond (real time, bounded): for the goroutine tests only.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRunWakesAtOnceForAForcedPollAndStopsOnCancel(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { r.p.Run(ctx); close(done) }()
	waitFor(t, "the first pass", func() bool { return r.rd.readsOf(url("a")) == 1 })
	r.clk.Advance(time.Minute) // not due for 59 more minutes; the Lane rests
	if err := r.st.ForceSeriesPoll(r.ctx, site, "a", r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the forced Poll", func() bool { return r.rd.readsOf(url("a")) == 2 })
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop")
	}
	// The lock went with it: another process leads at once.
	other := r.poller(r.second())
	if p := other.RunPass(r.ctx, site); p.Skip != "" {
		t.Fatalf("lock not released on stop: %+v", p)
	}
}

func TestTheLanePrunesThePassLogByAge(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.with(func(c *poller.Config) { c.PassRetention = 7 })
	old := r.clk.Now().Add(-8 * 24 * time.Hour).UnixMilli()
	kept := r.clk.Now().Add(-6 * 24 * time.Hour).UnixMilli()
	for _, at := range []int64{old, kept} {
		for _, s := range []string{site, "comix"} {
			if err := r.st.InsertPass(r.ctx, store.PassRow{Site: s, StartedAt: storetest.Milli(at), FinishedAt: storetest.Milli(at)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { r.p.Run(ctx); close(done) }()
	waitFor(t, "the prune", func() bool {
		rows := r.passes(site)
		return len(rows) == 2 && rows[0].StartedAt.Equal(storetest.Milli(kept))
	})
	cancel()
	<-done
	if got := len(r.passes("comix")); got != 2 {
		t.Fatalf("another Lane's pass log was pruned: %d rows", got)
	}
}

func TestTwoPollersOnOneDatabaseRunEachLaneOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ids := []string{"a", "b", "c", "d", "e", "f"}
	r.series(ids...)
	twoLanes := func(c *poller.Config) {
		c.LeaderRetry = 20 * time.Millisecond
		c.Sites = []string{site, "comix"}
	}
	a := r.with(twoLanes).p
	b := r.poller(r.second(), twoLanes)
	for _, id := range ids {
		r.seriesOn("comix", id+"c")
	}
	ctxA, stopA := context.WithCancel(r.ctx)
	ctxB, stopB := context.WithCancel(r.ctx)
	defer stopB()
	doneA := make(chan struct{})
	go func() { a.Run(ctxA); close(doneA) }()
	go b.Run(ctxB)

	all := func(n int) func() bool {
		return func() bool {
			for _, id := range ids {
				if r.rd.readsOf(url(id)) < n || r.rd.readsOf(url(id+"c")) < n {
					return false
				}
			}
			return true
		}
	}
	waitFor(t, "one round", all(1))
	// Let both processes contend for a while: the clock has not moved, so
	// any second read would be a Series polled twice in one round.
	time.Sleep(200 * time.Millisecond)
	for _, id := range ids {
		if n, m := r.rd.readsOf(url(id)), r.rd.readsOf(url(id+"c")); n != 1 || m != 1 {
			t.Fatalf("series %s read %d/%d times in one round", id, n, m)
		}
	}
	for _, s := range []string{site, "comix"} {
		for _, row := range r.passes(s) {
			if row.Skip == word.SkipNotLeader {
				t.Fatalf("a waiting replica wrote a pass row: %+v", row)
			}
		}
		// The reads alone cannot show two leaders: the conditional check
		// stamp keeps a second one from reading. The lock is what this
		// test is about, so count who took it.
		if n := strings.Count(r.logs.String(), `msg="lane lease taken" site=`+s+"\n"); n != 1 {
			t.Fatalf("the %s Lane lock was taken %d times while its leader lived", s, n)
		}
	}

	// The leader dies: the other takes over within its retry bound.
	stopA()
	<-doneA
	r.clk.Advance(time.Hour)
	// A Lane b already leads rests until the database wakes it; one it
	// does not lead yet takes the lease once the released one is seen free (ADR 0018).
	for _, s := range []string{site, "comix"} {
		if err := r.st.ForceLanePoll(r.ctx, s, r.clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the takeover", all(2))
}

func TestALeaderWhoseLeaseWasTakenStepsDown(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	b := r.poller(r.second())
	if p := r.pass(); p.Skip != "" {
		t.Fatalf("first leader: %+v", p)
	}
	// The leader could not renew in time (its host was suspended): its
	// lease ran out.
	r.exec(`UPDATE lane_leases SET expires_at = now() - interval '1 second'`)
	r.clk.Advance(time.Hour)
	if p := b.RunPass(r.ctx, site); p.Skip != "" || p.Counts.OK != 1 {
		t.Fatalf("the other process did not take over: %+v", p)
	}
	if p := r.p.RunPass(r.ctx, site); p.Skip != word.SkipNotLeader {
		t.Fatalf("the old leader did not step down: %+v", p)
	}
	if !strings.Contains(r.logs.String(), "lane lease lost") {
		t.Fatal("losing the lease was not logged")
	}
}

func TestTheDatabaseGoingAwayMidPassIsLoggedAndTheLaneResumes(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a", "b", "c", "d")
	db := pgx.Identifier{r.pool.Config().ConnConfig.Database}.Sanitize()
	// admin runs a statement as the server's superuser, from outside the
	// database that goes away.
	admin := func(sql string) {
		conn, err := pgx.Connect(context.Background(), storetest.ServerURL(t))
		if err != nil {
			panic(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), sql); err != nil {
			panic(err)
		}
	}
	r.rd.before = func(u string) {
		if u != url("b") {
			return
		}
		// The outage: every session ends and no new one is let in.
		admin(`REVOKE CONNECT ON DATABASE ` + db + ` FROM PUBLIC, pgtdbuser`)
		admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = ` + "'" + r.pool.Config().ConnConfig.Database + "'" + ` AND pid <> pg_backend_pid()`)
	}
	pass := r.pass()
	// a read; b read, its write lost; c's stamp finds the database gone and
	// the pass stops there: d is neither tried nor counted, and stays due.
	if pass.Counts.OK != 1 || pass.Counts.Errors != 2 || pass.Checked != 2 || pass.Due != 4 {
		t.Fatalf("the outage pass: %+v", pass)
	}
	if r.rd.readsOf(url("c")) != 0 || r.rd.readsOf(url("d")) != 0 {
		t.Fatal("pages were read without their check stamps")
	}
	for _, want := range []string{"check stamp failed", "write after read failed", "database unreachable; pass stopped", "pass not logged"} {
		if !strings.Contains(r.logs.String(), want) {
			t.Fatalf("not logged: %q\n%s", want, r.logs.String())
		}
	}
	if n := strings.Count(r.logs.String(), "check stamp failed"); n != 1 {
		t.Fatalf("%d check stamps tried against a database that is gone; want the one that found out", n)
	}

	// The database returns.
	r.rd.before = nil
	admin(`GRANT CONNECT ON DATABASE ` + db + ` TO PUBLIC, pgtdbuser`)
	next := r.pass()
	if next.Skip != "" || next.Counts.OK != 4 || next.Counts.Errors != 0 {
		t.Fatalf("the Lane did not resume: %+v\n%s", next, r.logs.String())
	}
	rows := r.passes(site)
	if len(rows) != 2 || !rows[0].StartedAt.Equal(pass.StartedAt) || rows[0].Errors != 2 || rows[1].OK != 4 {
		t.Fatalf("the outage pass was not recorded once the database returned: %+v", rows)
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		if f, ok := r.failure(id); ok {
			t.Fatalf("%s still failing after the database came back: %+v", id, f)
		}
	}
}

func TestAPoolOfDeadConnectionsCostsNoSeriesAFalseFailure(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a", "b", "c", "d")
	r.pass() // every pooled connection has been used
	r.rd.before = func(u string) {
		if u != url("a") {
			return
		}
		conn, err := pgx.Connect(context.Background(), r.pool.Config().ConnString())
		if err != nil {
			panic(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
			panic(err)
		}
	}
	pass := r.pass()
	if pass.Counts.OK != 4 || pass.Counts.Errors != 0 {
		t.Fatalf("a restart cost Series false failures: %+v\n%s", pass, r.logs.String())
	}
	if rows := r.passes(site); len(rows) != 2 {
		t.Fatalf("pass log: %+v", rows)
	}
}

func TestAReadCutShortByShutdownWritesNothingAboutTheSeries(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a", "b")
	ctx, cancel := context.WithCancel(r.ctx)
	r.rd.script(url("a"), failResult(word.Errors, 0, false))
	r.rd.before = func(string) { cancel() }
	r.clk.Advance(time.Hour)
	pass := r.p.RunPass(ctx, site)
	if pass.Counts.Errors != 0 || r.rd.readsOf(url("b")) != 0 {
		t.Fatalf("pass: %+v", pass)
	}
	if _, ok := r.failure("a"); ok {
		t.Fatal("shutdown was recorded as a failure of the Series")
	}
	if rows := r.passes(site); len(rows) != 1 || rows[0].Due != 2 {
		t.Fatalf("the interrupted pass was not recorded: %+v", rows)
	}
}

// A Forced Poll whose read our own shutdown (SIGTERM) cut short was never
// served: the Series keeps the check it had, so it is still due first, with
// its Forced Poll pending, for whichever process passes next (issue 22,
// item 7).
func TestAForcedPollCutShortByShutdownStaysPending(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	r.pass() // a is read once; nothing is due now
	before := r.get("a")
	r.clk.Advance(time.Minute)
	if err := r.st.ForceSeriesPoll(r.ctx, site, "a", r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(time.Second)
	ctx, cancel := context.WithCancel(r.ctx)
	r.rd.script(url("a"), failResult(word.Errors, 0, false))
	r.rd.before = func(string) { cancel() }
	if pass := r.p.RunPass(ctx, site); pass.Counts.Errors != 0 || pass.Checked != 0 {
		t.Fatalf("the interrupted pass: %+v", pass)
	}
	after := r.get("a")
	if !after.CheckedAt.Equal(before.CheckedAt) || !after.NextReadAt.Equal(before.NextReadAt) {
		t.Fatalf("the interrupted read kept its check stamp: %v/%v -> %v/%v",
			before.CheckedAt, before.NextReadAt, after.CheckedAt, after.NextReadAt)
	}
	due, err := r.st.DueSeries(r.ctx, site, store.DueAsk{Now: r.clk.Now(), Floor: time.Hour, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 1 || due[0].SeriesID != "a" || due[0].Rank != 0 {
		t.Fatalf("the Forced Poll is not pending: %+v", due)
	}
	// The next pass serves it.
	r.rd.before = nil
	r.rd.script(url("a"), okResult("10"))
	if pass := r.p.RunPass(r.ctx, site); pass.Checked != 1 {
		t.Fatalf("the next pass: %+v", pass)
	}
}

// A pass that shutdown interrupts logs no error: a step the stop cut short
// (the due query after the batch, the next-due probe) is the stop, not a
// fault, and a clean stop must not read like a crash (issue 22, item 10).
// The pass is still recorded.
func TestAPassInterruptedByShutdownLogsNoError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		series []string
		read   adapters.Result
	}{
		{"the last read of the batch answers as the stop begins", []string{"a"}, okResult("11")},
		{"the stop cuts a read short with more Series due", []string{"a", "b"}, failResult(word.Errors, 0, false)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			r.series(c.series...)
			ctx, cancel := context.WithCancel(r.ctx)
			r.rd.script(url("a"), c.read)
			r.rd.before = func(string) { cancel() }
			r.clk.Advance(time.Hour)
			r.p.RunPass(ctx, site)
			if logs := r.logs.String(); strings.Contains(logs, "level=ERROR") {
				t.Fatalf("a clean stop logged an error:\n%s", logs)
			}
			if rows := r.passes(site); len(rows) != 1 {
				t.Fatalf("the interrupted pass was not recorded: %+v", rows)
			}
		})
	}
}

func TestRequestsToOneSiteAreSpaced(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a", "b", "c")
	r.with(func(c *poller.Config) { c.Spacing = 25 * time.Millisecond })
	var mu sync.Mutex
	var at []time.Time
	r.rd.before = func(string) {
		mu.Lock()
		defer mu.Unlock()
		at = append(at, time.Now())
	}
	r.pass()
	r.clk.Advance(time.Minute)
	if err := r.st.ForceSeriesPoll(r.ctx, site, "a", r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	r.p.RunPass(r.ctx, site) // a forced pass right after: still spaced
	if len(at) != 4 {
		t.Fatalf("%d reads", len(at))
	}
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < 25*time.Millisecond {
			t.Fatalf("read %d came %v after the one before", i, gap)
		}
	}
}

// A pass that outlasts its length after reading every due Series asks for
// no pass at once: the pass that followed one spacing later found nothing
// due, and a pass with nothing due ends a stall run (store.StallRun), so a
// Site whose reads hang past the pass's length never showed a stall. Under
// load the demo's clock skip landed inside such a pass and its stall embed
// never came.
func TestAPassThatOutlastsItsLengthDoesNotBreakAStallRun(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a", "b")
	r.with(func(c *poller.Config) { c.ListingEvery = time.Minute }) // the pass's length
	r.rd.script(url("a"), failResult(word.Errors, 0, false))
	r.rd.script(url("b"), failResult(word.Errors, 0, false))
	var hang sync.Once
	r.rd.before = func(string) { hang.Do(func() { r.clk.Advance(2 * time.Minute) }) }
	first := r.pass()
	r.clk.Advance(first.Rest)
	second := r.p.RunPass(r.ctx, site)
	rows := r.passes(site)
	if len(rows) != 2 {
		t.Fatalf("pass log: %+v", rows)
	}
	for _, row := range rows {
		if row.Due == 0 || row.Checked != 0 || row.Skip != word.SkipNone || row.Counts.Refused != 0 {
			t.Fatalf("a pass of the stalled Site is not a stall pass (the first rested %s): %+v", first.Rest, rows)
		}
	}
	since, ok, err := r.st.StallRun(r.ctx, site, second.StartedAt, time.Time{})
	if err != nil || !ok || !since.Equal(rows[0].StartedAt) {
		t.Fatalf("stall run: since %v ok %v err %v, want since the first pass %v", since, ok, err, rows[0].StartedAt)
	}
}

func TestABoundedPassServesAForcedLaneOnlyWhenItReachedEverySeries(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a", "b")
	r.with(func(c *poller.Config) { c.MaxPerPass = 1 })
	r.pass()
	r.pass() // both checked once, an hour apart
	r.clk.Advance(time.Minute)
	if err := r.st.ForceLanePoll(r.ctx, site, r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(time.Minute)
	// The force owes both; the pass reads one (due is what it owed).
	if p := r.p.RunPass(r.ctx, site); p.Due != 2 || p.Checked != 1 {
		t.Fatalf("%+v", p)
	}
	if ln, _ := r.st.GetLane(r.ctx, site); ln.ForcePollAt.IsZero() {
		t.Fatal("the force was marked served with a Series still owed")
	}
	r.clk.Advance(time.Minute)
	if p := r.p.RunPass(r.ctx, site); p.Due != 1 {
		t.Fatalf("%+v", p)
	}
	if ln, _ := r.st.GetLane(r.ctx, site); !ln.ForcePollAt.IsZero() {
		t.Fatal("the force was never served")
	}
}

func TestARequestWrittenByAnotherProcessWakesTheLeadersLane(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	r.seriesOn("comix", "c")
	r.with(func(c *poller.Config) { c.Sites = []string{site, "comix"} })
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	done := make(chan struct{})
	go func() { r.p.Run(ctx); close(done) }()
	waitFor(t, "the first passes", func() bool { return r.rd.readsOf(url("a")) == 1 && r.rd.readsOf(url("c")) == 1 })

	// The admin handlers of another replica write through the store alone.
	other := r.second()
	r.clk.Advance(time.Minute)
	if err := other.ForceSeriesPoll(r.ctx, site, "a", r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the forced Series", func() bool { return r.rd.readsOf(url("a")) == 2 })
	r.clk.Advance(time.Minute)
	if err := other.ForceLanePoll(r.ctx, "comix", r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the forced Lane", func() bool { return r.rd.readsOf(url("c")) == 2 })
	if r.rd.readsOf(url("a")) != 2 {
		t.Fatal("a wake for comix woke novelfull")
	}
	if err := other.ForceSeriesPoll(r.ctx, site, "missing", storetest.Milli(1)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("forcing a missing Series: %v", err)
	}
	cancel()
	<-done
}

func TestALockThatCannotBeAskedForIsALockErrorNotAnotherLeader(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	if err := r.pool.Ping(r.ctx); err != nil { // keep one pooled connection open
		t.Fatal(err)
	}
	// New sessions are refused; the pool's open one still works.
	r.exec(`DO $$ BEGIN EXECUTE format('REVOKE CONNECT ON DATABASE %I FROM PUBLIC, %I', current_database(), current_user); END $$`)
	r.clk.Advance(time.Hour)
	pass := r.p.RunPass(r.ctx, site)
	if pass.Skip != word.SkipLockError {
		t.Fatalf("%+v", pass)
	}
	if rows := r.passes(site); len(rows) != 1 || rows[0].Skip != word.SkipLockError {
		t.Fatalf("pass log: %+v", rows)
	}
}

func TestTheLanePrunesAtMostHourly(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.with(func(c *poller.Config) {
		c.PassRetention = 7
		c.DefaultRest = 20 * time.Millisecond // passes follow each other quickly
	})
	old := r.clk.Now().Add(-8 * 24 * time.Hour).UnixMilli()
	// The first prune follows the first pass; its row's going is how the
	// test knows it happened (the pass's own row is logged before it).
	if err := r.st.InsertPass(r.ctx, store.PassRow{Site: site, StartedAt: storetest.Milli(old - 1), FinishedAt: storetest.Milli(old - 1)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { r.p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the first prune", func() bool {
		rows := r.passes(site)
		return len(rows) >= 1 && !rows[0].StartedAt.Equal(storetest.Milli(old-1))
	})

	if err := r.st.InsertPass(r.ctx, store.PassRow{Site: site, StartedAt: storetest.Milli(old), FinishedAt: storetest.Milli(old)}); err != nil {
		t.Fatal(err)
	}
	first := len(r.passes(site))
	waitFor(t, "more passes", func() bool { return len(r.passes(site)) >= first+5 })
	if rows := r.passes(site); !rows[0].StartedAt.Equal(storetest.Milli(old)) {
		t.Fatal("pruned again within the hour")
	}
	r.clk.Advance(61 * time.Minute)
	waitFor(t, "the hourly prune", func() bool { return !r.passes(site)[0].StartedAt.Equal(storetest.Milli(old)) })
}

// After every session of the database is cut (what a PostgreSQL restart
// does), the resting leader takes its LISTEN back within seconds, keeping
// its lease,
// so a Forced Poll the owner asks for then is served, not left to the
// Lane's hour-long rest.
func TestAfterTheDatabaseCutsEverySessionAForcedPollIsStillServed(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { r.p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the first pass", func() bool { return r.rd.readsOf(url("a")) == 1 })
	r.clk.Advance(time.Minute) // not due for 59 more minutes; the Lane rests

	other := r.second()
	var cut []int32
	if err := other.Pool().QueryRow(r.ctx, `WITH s AS MATERIALIZED (SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid())
		SELECT coalesce(array_agg(pid), '{}') FROM s WHERE pg_terminate_backend(pid)`).Scan(&cut); err != nil {
		t.Fatal(err)
	}
	// The cut sessions let their locks go as they exit, a moment later:
	// until they are gone, a granted lock may still be the old one's.
	waitFor(t, "the cut sessions to end", func() bool {
		var n int
		err := other.Pool().QueryRow(r.ctx, `SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)`, cut).Scan(&n)
		return err == nil && n == 0
	})
	waitFor(t, "the wake session taken again", func() bool {
		return strings.Contains(r.logs.String(), "lane wake session taken again")
	})
	// The admin's control writes through the database alone.
	if err := other.ForceSeriesPoll(r.ctx, site, "a", r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the Forced Poll", func() bool { return r.rd.readsOf(url("a")) == 2 })
}

// outage cuts the rig's database: every session ends and no new one is let
// in (superusers excepted), until the returned function lets them back.
func (r *rig) outage() (back func()) {
	db := pgx.Identifier{r.pool.Config().ConnConfig.Database}.Sanitize()
	admin := func(sql string) {
		conn, err := pgx.Connect(context.Background(), storetest.ServerURL(r.t))
		if err != nil {
			panic(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), sql); err != nil {
			panic(err)
		}
	}
	admin(`REVOKE CONNECT ON DATABASE ` + db + ` FROM PUBLIC, pgtdbuser`)
	admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = ` + "'" + r.pool.Config().ConnConfig.Database + "'" + ` AND pid <> pg_backend_pid()`)
	return func() { admin(`GRANT CONNECT ON DATABASE ` + db + ` TO PUBLIC, pgtdbuser`) }
}

func TestAtShutdownHeldBackPassRowsGetOneLastTry(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	// A session of the test's own on the rig's database, as a superuser (the
	// outage does not shut it out): it gives the Lane's lease to another
	// holder while the leader is cut off, so the Lane stops passing and its
	// held-back row can only be written by the shutdown.
	u, _ := neturl.Parse(storetest.ServerURL(t))
	u.Path = "/" + r.pool.Config().ConnConfig.Database
	var holder *pgx.Conn
	defer func() {
		if holder != nil {
			holder.Close(r.ctx)
		}
	}()
	var back func()
	r.rd.before = func(string) {
		back = r.outage()
		var err error
		if holder, err = pgx.Connect(r.ctx, u.String()); err != nil {
			panic(err)
		}
		if _, err := holder.Exec(r.ctx, `UPDATE lane_leases SET holder = 'another process', expires_at = now() + interval '1 hour'
			WHERE site = $1`, site); err != nil {
			panic(err)
		}
	}
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { r.p.Run(ctx); close(done) }()
	waitFor(t, "the pass row held back", func() bool { return strings.Contains(r.logs.String(), "pass not logged") })
	back()
	waitFor(t, "the lease found taken", func() bool { return strings.Contains(r.logs.String(), "lane lease lost") })
	if rows := r.passes(site); len(rows) != 0 {
		t.Fatalf("the held-back row was written before shutdown: %+v", rows)
	}
	cancel()
	<-done
	if rows := r.passes(site); len(rows) != 1 || rows[0].Errors != 1 {
		t.Fatalf("after shutdown: %+v; want the held-back row written", rows)
	}
	if strings.Contains(r.logs.String(), "not written at shutdown") {
		t.Fatalf("reported a row as lost that was written:\n%s", r.logs)
	}
}

func TestAtShutdownPassRowsTheDatabaseStillRefusesAreCountedInOneLine(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	var back func()
	r.rd.before = func(string) { back = r.outage() }
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { r.p.Run(ctx); close(done) }()
	waitFor(t, "the pass row held back", func() bool { return strings.Contains(r.logs.String(), "pass not logged") })
	cancel()
	<-done
	back()
	logs := r.logs.String()
	if n := strings.Count(logs, "pass rows not written at shutdown"); n != 1 || !strings.Contains(logs, "rows=1 sites=novelfull") {
		t.Fatalf("want one line counting the row:\n%s", logs)
	}
}

// ORPHAN_RETENTION (ADR 0024): the Lane's prune deletes its orphans older
// than the setting, with one line in the log, and keeps a younger orphan
// and a bookmarked Series.
func TestTheLaneDeletesOrphansOlderThanTheRetention(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.with(func(c *poller.Config) { c.OrphanRetention = 30 * 24 * time.Hour })
	r.orphans("old", "young")
	r.series("held")
	r.exec(`UPDATE series SET orphaned_at = $1 WHERE series_id = 'old'`, r.clk.Now().Add(-31*24*time.Hour))
	r.exec(`UPDATE series SET orphaned_at = $1 WHERE series_id IN ('young', 'held')`, r.clk.Now().Add(-29*24*time.Hour))
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { r.p.Run(ctx); close(done) }()
	waitFor(t, "the orphans' line", func() bool { return strings.Contains(r.logs.String(), `msg="orphans deleted"`) })
	cancel()
	<-done
	if line := r.logs.String(); !strings.Contains(line, `msg="orphans deleted" site=novelfull count=1 retention=720h0m0s`) {
		t.Fatalf("the log line:\n%s", line)
	}
	if _, err := r.st.GetSeries(r.ctx, site, "old"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the old orphan stayed: %v", err)
	}
	for _, id := range []string{"young", "held"} {
		if _, err := r.st.GetSeries(r.ctx, site, id); err != nil {
			t.Fatalf("%s went: %v", id, err)
		}
	}
}

// Unset, ORPHAN_RETENTION keeps every orphan, however old.
func TestWithoutARetentionTheLaneKeepsOrphans(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.orphans("old")
	r.exec(`UPDATE series SET orphaned_at = $1`, r.clk.Now().Add(-10*365*24*time.Hour))
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { r.p.Run(ctx); close(done) }()
	// The failing figure is recorded right after the prune.
	waitFor(t, "the prune", func() bool {
		var n int
		err := r.pool.QueryRow(r.ctx, `SELECT count(*) FROM failing_history WHERE site = $1`, site).Scan(&n)
		return err == nil && n > 0
	})
	cancel()
	<-done
	if _, err := r.st.GetSeries(r.ctx, site, "old"); err != nil || strings.Contains(r.logs.String(), "orphans deleted") {
		t.Fatalf("an orphan went with no retention set: %v\n%s", err, r.logs.String())
	}
}

// POLL_EVERY's per-Site pace is the floor of that Lane's schedule: a
// Series whose cadence asks for a read within the hour is next owed one
// only after its Site's pace (3h here; the default would say 1h).
func TestASitesOwnPaceIsItsLanesFloor(t *testing.T) {
	t.Parallel()
	every, err := poller.ParsePollEvery("1h,novelfull=3h")
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t)
	r.with(func(c *poller.Config) { c.PollEvery = every })
	r.series("a")
	r.exec(`UPDATE series SET cadence_s = 600, chapter_arrived_at = $1, latest_chapter_num = 10, polled_chapter_num = 10`, r.clk.Now())
	r.pass()
	if got, want := r.get("a").NextReadAt, r.clk.Now().Add(3*time.Hour); !got.Equal(want) {
		t.Fatalf("next read at %v, want %v: the Site's own pace", got, want)
	}
}

// A Lane asks for its lease on every tick; while the database refuses, that
// is one line, then one a minute with the count, then one when it clears.
func TestALeaseNotTakenOnEveryTickLogsOnceAMinuteAndItsRecovery(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	if err := r.pool.Ping(r.ctx); err != nil { // keep one pooled connection open
		t.Fatal(err)
	}
	r.exec(`DO $$ BEGIN EXECUTE format('REVOKE CONNECT ON DATABASE %I FROM PUBLIC, %I', current_database(), current_user); END $$`)
	const line = `msg="lane lease not taken"`
	for range 20 { // 20 ticks in 10 s
		r.clk.Advance(500 * time.Millisecond)
		if pass := r.p.RunPass(r.ctx, site); pass.Skip != word.SkipLockError {
			t.Fatalf("%+v", pass)
		}
	}
	if n := strings.Count(r.logs.String(), line); n != 1 {
		t.Fatalf("20 failed lease asks in 10 s wrote %d lines, want 1:\n%s", n, r.logs)
	}
	r.clk.Advance(time.Minute)
	r.p.RunPass(r.ctx, site)
	if n := strings.Count(r.logs.String(), line); n != 2 || !strings.Contains(r.logs.String(), "repeated=20") {
		t.Fatalf("after a minute: %d lines, want 2, the second counting 20:\n%s", n, r.logs)
	}
	r.exec(`DO $$ BEGIN EXECUTE format('GRANT CONNECT ON DATABASE %I TO PUBLIC, %I', current_database(), current_user); END $$`)
	r.clk.Advance(time.Second)
	r.p.RunPass(r.ctx, site)
	if n := strings.Count(r.logs.String(), `msg="lane lease not taken: recovered"`); n != 1 || !strings.Contains(r.logs.String(), "failures=21") {
		t.Fatalf("the recovery: %d lines, want 1 after 21 failures:\n%s", n, r.logs)
	}
}

// The pass log's due is what the pass owed at its start (CONTEXT.md, Pass),
// not what it took in batches: a pass cut short by MaxPerPass records the
// five it owed beside the two it read, and the next pass the three left.
func TestAPassCutShortRecordsEverythingItOwed(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a", "b", "c", "d", "e")
	r.with(func(c *poller.Config) { c.MaxPerPass = 2 })
	pass := r.pass()
	if pass.Due != 5 || pass.Checked != 2 {
		t.Fatalf("the cut-short pass: due %d, checked %d; want 5 owed, 2 read", pass.Due, pass.Checked)
	}
	if rows := r.passes(site); len(rows) != 1 || rows[0].Due != 5 || rows[0].Due <= rows[0].Checked {
		t.Fatalf("pass log: %+v, want due 5 > checked 2", rows)
	}
	if next := r.p.RunPass(r.ctx, site); next.Due != 3 || next.Checked != 2 {
		t.Fatalf("the next pass: due %d, checked %d; want 3 owed, 2 read", next.Due, next.Checked)
	}
}

// A Lane keeps /admin's freshness figure (migration 0035): after its pass
// the figure holds the day's Arrivals, so the page reads that one row.
func TestTheLaneKeepsTheFreshnessFigure(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	now := r.clk.Now()
	r.exec(`INSERT INTO chapter_arrivals (site, series_id, chapter_num, confirmed_at, noticed_at) VALUES ($1, 'a', 2, $2, $3)`,
		site, now.Add(-time.Hour), now.Add(-time.Hour-90*time.Second))
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { r.p.Run(ctx); close(done) }()
	var n, unlisted int64
	var median *float64
	waitFor(t, "the freshness figure", func() bool {
		err := r.pool.QueryRow(r.ctx, `SELECT n, median_s, unlisted FROM freshness_figure WHERE computed_at > '-infinity'`).Scan(&n, &median, &unlisted)
		return err == nil
	})
	cancel()
	<-done
	if n != 1 || median == nil || *median != 90 || unlisted != 1 {
		t.Fatalf("the kept figure: %d arrivals (%d no listing named), median %v; want 1 (1), 90 s", n, unlisted, median)
	}
}
