package poller_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
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

// t0 is the fake clock's start: 2026-08-21 08:00 UTC.
var t0 = time.Date(2026, 8, 21, 8, 0, 0, 0, time.UTC)

// clock is the injected clock; tests move it, nothing sleeps.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: t0} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fakeReader answers scripted Results per Series address. A script's last
// Result repeats; an address with no script reads ok at chapter 10.
type fakeReader struct {
	mu      sync.Mutex
	scripts map[string][]adapters.Result
	reads   map[string]int
	routes  map[string]word.Route
	browser bool
	// before runs before each read (a test's hook: panic, kill the database).
	before func(url string)
}

func newReader() *fakeReader {
	return &fakeReader{scripts: map[string][]adapters.Result{}, reads: map[string]int{}, routes: map[string]word.Route{}, browser: true}
}

func (f *fakeReader) script(url string, rs ...adapters.Result) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scripts[url] = rs
}

func (f *fakeReader) Read(ctx context.Context, site, url string) adapters.Result {
	f.mu.Lock()
	before := f.before
	f.reads[url]++
	rs := f.scripts[url]
	var r adapters.Result
	switch {
	case len(rs) == 0:
		r = okResult("10")
	case len(rs) == 1:
		r = rs[0]
	default:
		r, f.scripts[url] = rs[0], rs[1:]
	}
	f.mu.Unlock()
	if before != nil {
		before(url)
	}
	return r
}

func (f *fakeReader) readsOf(url string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads[url]
}

func (f *fakeReader) Route(site string) word.Route {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.routes[site]; ok {
		return r
	}
	return word.RoutePlain
}

func (f *fakeReader) HasBrowser() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.browser
}

func okResult(ch string) adapters.Result {
	return adapters.Result{Outcome: word.OK, Checked: true, Status: 200, Facts: adapters.Facts{
		Title: "A Title", Kind: word.Novel, LatestChapter: ch, HasLatest: true,
		LatestChapterURL: "https://novelfull.com/ch-" + ch + ".html",
	}}
}

func failResult(o word.Outcome, status int, checked bool) adapters.Result {
	return adapters.Result{Outcome: o, Status: status, Checked: checked, Err: errors.New(string(o))}
}

// stmts records every statement the pool runs (a pgx tracer).
type stmts struct {
	mu  sync.Mutex
	sql []string
}

func (s *stmts) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sql = append(s.sql, strings.Join(strings.Fields(d.SQL), " "))
	return ctx
}

func (s *stmts) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (s *stmts) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sql = nil
}

// writes returns the write statements run since the last reset.
func (s *stmts) writes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var w []string
	for _, q := range s.sql {
		if writeTarget(q) != "" {
			w = append(w, q)
		}
	}
	return w
}

// writeTarget is the table a statement first writes ("" for a read): a
// write may open the statement or sit in a WITH, as the arrival's does.
func writeTarget(q string) string {
	f := strings.Fields(q)
	for i, w := range f {
		switch strings.ToUpper(strings.TrimLeft(w, "(")) {
		case "UPDATE":
			if i+1 < len(f) {
				return f[i+1]
			}
		case "INSERT", "DELETE":
			if i+2 < len(f) {
				return f[i+2]
			}
		}
	}
	return ""
}

// polls returns every statement, read or write, the pass's Polls ran: those
// after its first due query and before the pass's own bookkeeping (the
// next-due probe, a Lane refusal, the pass-log row), the due queries
// between batches aside. Any statement counts, whatever its form: a write
// hidden in a CTE or an extra read is a cost too. The Lane's lease
// renewals are not a Poll's: the renewer runs on its own tick (ADR 0018).
func (s *stmts) polls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	in := false
	for _, q := range s.sql {
		switch {
		case strings.Contains(q, "SELECT DISTINCT ON (series_id)"):
			if !in {
				in, out = true, nil
			}
		case !in, isLease(q):
		case strings.Contains(q, "SELECT least("),
			strings.HasPrefix(q, "UPDATE poll_lanes"), strings.HasPrefix(q, "INSERT INTO poll_passes"):
			in = false
		default:
			out = append(out, q)
		}
	}
	return out
}

// isLease reports whether q claims, renews or releases a Lane's lease.
func isLease(q string) bool { return strings.Contains(q, "lane_leases") }

// isStamp reports whether q is the check stamp.
func isStamp(q string) bool { return strings.HasPrefix(q, "UPDATE series s SET checked_at") }

// touching returns the write statements whose target table is table.
func (s *stmts) touching(table string) []string {
	var w []string
	for _, q := range s.writes() {
		if writeTarget(q) == table {
			w = append(w, q)
		}
	}
	return w
}

// logBuf is a concurrency-safe log sink.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// rig is one test's world: a fresh database, a traced pool, a fake clock,
// a fake Reader and a Poller over them.
type rig struct {
	t    *testing.T
	ctx  context.Context
	pool *pgxpool.Pool
	st   *store.Store
	clk  *clock
	rd   *fakeReader
	// lst, when set, is the Reader the rig's Pollers read through: rd with
	// a listing (withListing).
	lst   *listingReader
	p     *poller.Poller
	trace *stmts
	logs  *logBuf
}

func newRig(t *testing.T) *rig {
	t.Helper()
	tr := &stmts{}
	pool := storetest.Pool(t, func(c *pgxpool.Config) { c.ConnConfig.Tracer = tr })
	r := &rig{t: t, ctx: context.Background(), pool: pool, st: store.New(pool), clk: newClock(),
		rd: newReader(), trace: tr, logs: &logBuf{}}
	r.p = r.poller(r.st)
	return r
}

// poller builds a Poller on st sharing the rig's clock, Reader and log,
// polling the novelfull Lane with no spacing; set changes that Config first.
func (r *rig) poller(st *store.Store, set ...func(*poller.Config)) *poller.Poller {
	c := poller.Config{Now: r.clk.Now, Logger: slog.New(slog.NewTextHandler(r.logs, nil)), Sites: []string{"novelfull"}}
	for _, f := range set {
		f(&c)
	}
	var rd poller.Reader = r.rd
	if r.lst != nil {
		rd = r.lst
	}
	p := poller.New(st, rd, c)
	r.t.Cleanup(p.Close)
	return p
}

// with replaces the rig's Poller by one whose Config set changed. Call it
// before the rig's Poller has run: the in-process state goes with it.
func (r *rig) with(set func(*poller.Config)) *rig {
	r.p = r.poller(r.st, set)
	return r
}

const site = "novelfull"

func url(id string) string { return "https://novelfull.com/" + id + ".html" }

// series adds a Series checked long ago, so it is due, and bookmarked by
// the rig's Reader: a Series nobody tracks is read only at the backstop
// (ADR 0016), orphans() adds those.
func (r *rig) series(ids ...string) {
	r.t.Helper()
	for _, id := range ids {
		r.seriesOn(site, id)
	}
}

func (r *rig) seriesOn(s, id string) {
	r.t.Helper()
	r.orphanOn(s, id)
	storetest.Ensure(r.t, r.pool, storetest.Reader{ID: "rig-reader", Name: "Rig"})
	storetest.Insert(r.t, r.pool, storetest.Bookmark{Reader: "rig-reader", Site: word.Site(s), Series: id})
}

// orphans adds Series checked long ago that nobody bookmarks.
func (r *rig) orphans(ids ...string) {
	r.t.Helper()
	for _, id := range ids {
		r.orphanOn(site, id)
	}
}

func (r *rig) orphanOn(s, id string) {
	r.t.Helper()
	if err := r.st.CreateSeries(r.ctx, store.Series{Site: s, SeriesID: id, URL: url(id), Title: "A Title", Kind: "novel"}, storetest.Milli(1)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) exec(sql string, args ...any) {
	r.t.Helper()
	if _, err := r.pool.Exec(r.ctx, sql, args...); err != nil {
		r.t.Fatalf("%s: %v", sql, err)
	}
}

func (r *rig) get(id string) store.Series {
	r.t.Helper()
	s, err := r.st.GetSeries(r.ctx, site, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

// failure returns the failure row, and false when there is none.
func (r *rig) failure(id string) (store.Failure, bool) {
	r.t.Helper()
	var outcome string
	var since int64
	err := r.pool.QueryRow(r.ctx, `SELECT outcome, `+storetest.MilliOf("failing_since")+` FROM poll_failures WHERE site = $1 AND series_id = $2`, site, id).Scan(&outcome, &since)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Failure{}, false
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return store.Failure{Outcome: word.Outcome(outcome), FailingSince: time.UnixMilli(since)}, true
}

// xmin is the failure row's tuple version: unchanged means nothing wrote it.
func (r *rig) xmin(id string) string {
	r.t.Helper()
	var v string
	if err := r.pool.QueryRow(r.ctx, `SELECT xmin::text FROM poll_failures WHERE site = $1 AND series_id = $2`, site, id).Scan(&v); err != nil {
		r.t.Fatal(err)
	}
	return v
}

func (r *rig) passes(s string) []store.PassRow {
	r.t.Helper()
	rows, err := r.st.ListPasses(r.ctx, s, time.Time{})
	if err != nil {
		r.t.Fatal(err)
	}
	return rows
}

// pass runs one pass of the novelfull Lane after moving the clock an hour,
// so every Series is due again.
func (r *rig) pass() poller.Pass {
	r.t.Helper()
	r.clk.Advance(time.Hour)
	return r.p.RunPass(r.ctx, site)
}
