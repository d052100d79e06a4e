// Package poller runs the Lanes: one goroutine per Site that repeatedly runs
// a pass (pick the due Series, Poll each, write one pass-log row), then rests
// for the pace the pass reported, never longer than DefaultRest.
//
// Every pass writes one pass-log row; a pass that returned early names the
// path it took with a word.Skip value (CONTEXT.md, Skip value).
package poller

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/internal/repeat"
	"github.com/mangabookmark/mangabookmark/poller/schedule"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// Defaults for the zero fields of Config.
const (
	DefaultPollEvery      = time.Hour
	DefaultSpacing        = 3 * time.Second // what a server wants; POLL_SPACING's default
	DefaultBrowserDownFor = 15 * time.Minute
	DefaultDefaultRest    = time.Hour
	DefaultPassRetention  = 14 // days
	DefaultRefuseFor      = 30 * time.Minute
	DefaultMaxRefuse      = 6 * time.Hour
	DefaultReadTimeout    = 90 * time.Second
	DefaultMinRest        = 30 * time.Second
	DefaultErrorRest      = time.Minute
	DefaultLeaderRetry    = 30 * time.Second
	// DefaultLeaderLease is how long a Lane's lease lasts unrenewed: the
	// bound on a takeover after its holder vanished (ADR 0018).
	DefaultLeaderLease = 30 * time.Second
	// DefaultPassLength bounds a pass of a Lane that reads no listing.
	DefaultPassLength = 5 * time.Minute
	// batchSize is how many Series a pass reads between two due queries: a
	// Forced Poll or a Sighting that arrives mid-pass waits at most this
	// many spacings (ADR 0016).
	batchSize = 4
)

// Config is how a Poller runs. A zero field takes its default (the
// constants above) once, in New, with one exception: a zero Spacing is
// none (tests, and POLL_SPACING=0s); the server passes POLL_SPACING, whose
// own default is DefaultSpacing.
type Config struct {
	// Sites are the Lanes Run starts; nil is every Site.
	Sites []string
	// PollEvery is each Site's pace; a Site missing or zero takes DefaultPollEvery.
	PollEvery map[string]time.Duration
	// Spacing is the least time between two requests to one Site; zero
	// (or less) is none.
	Spacing time.Duration
	// BrowserDownFor is how long an unreachable sidecar keeps every browser
	// Lane of this process skipping.
	BrowserDownFor time.Duration
	// DefaultRest is the longest a Lane rests between passes.
	DefaultRest time.Duration
	// PassRetention is how many days of pass log to keep.
	PassRetention int
	// RefuseFor is how long two refusals stop a Lane; a larger Retry-After
	// wins, up to MaxRefuse.
	RefuseFor, MaxRefuse time.Duration
	// ReadTimeout bounds one Read.
	ReadTimeout time.Duration
	// MinRest keeps a Lane whose passes achieve nothing from spinning.
	MinRest time.Duration
	// ErrorRest is the rest after a pass the database stopped.
	ErrorRest time.Duration
	// LeaderRetry is the most a Lane that is not leader waits before it
	// asks for the lease again; it asks as soon as the lease it found
	// runs out, when that is sooner (ADR 0018).
	LeaderRetry time.Duration
	// LeaderLease is how long a Lane's lease lasts unless renewed; its
	// holder renews it every third of that while it lives (ADR 0018).
	LeaderLease time.Duration
	// MaxPerPass bounds the Series one pass polls (0 = all that are due).
	MaxPerPass int
	// ListingEvery is how often a Lane reads its Site's latest-updates
	// listing (LISTING_EVERY); zero is never, and the server passes its
	// default, schedule.DefaultListingEvery. A pass lasts at most this
	// long (DefaultPassLength without a listing), so the listing is read on
	// time and the pass log keeps a pace.
	ListingEvery time.Duration
	// Backstop is the most time between two reads of a Series that is not
	// Finished, budget allowing (POLL_BACKSTOP; schedule.Policy).
	Backstop time.Duration
	// OrphanRetention is ORPHAN_RETENTION: an orphan older than this is
	// deleted at the Lane's prune (ADR 0024); zero keeps orphans forever.
	OrphanRetention time.Duration

	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Logger nil is slog.Default().
	Logger *slog.Logger
	// Covers fetches Series covers while a Lane rests; nil fetches none.
	Covers CoverFetcher
	// Notifier is called after every pass-log insert, on every return path
	// of a pass. nil turns notification off. Its error is logged.
	Notifier func(ctx context.Context, site string, passAt time.Time) error
	// Observer is told what each pass did and each Arrival's detection
	// delay, for the metrics (issue 25, item 5); nil tells no one. It is
	// called with what the pass already holds: it adds no statement.
	Observer Observer
}

// Observer is told what the Lanes did. Its methods must return at once.
type Observer interface {
	// Passed is one pass of site's Lane, its Skip value and its Polls'
	// outcomes, as its pass-log row records them.
	Passed(site string, skip word.Skip, polls word.Counts)
	// Detected is one Arrival written, with its detection delay, the
	// figure the Lanes page reads from chapter_arrivals (CONTEXT.md,
	// Detection delay).
	Detected(site string, delay time.Duration)
}

// normalised is c with every default filled in.
func (c Config) normalised() Config {
	if c.Sites == nil {
		c.Sites = word.SiteNames()
	}
	every := make(map[string]time.Duration, len(c.PollEvery))
	for _, site := range append(word.SiteNames(), c.Sites...) {
		every[site] = DefaultPollEvery
	}
	for site, d := range c.PollEvery {
		every[site] = cmp.Or(d, DefaultPollEvery)
	}
	c.PollEvery = every
	c.Spacing = max(c.Spacing, 0)
	c.BrowserDownFor = cmp.Or(c.BrowserDownFor, DefaultBrowserDownFor)
	c.DefaultRest = cmp.Or(c.DefaultRest, DefaultDefaultRest)
	c.PassRetention = cmp.Or(c.PassRetention, DefaultPassRetention)
	c.RefuseFor = cmp.Or(c.RefuseFor, DefaultRefuseFor)
	c.MaxRefuse = cmp.Or(c.MaxRefuse, DefaultMaxRefuse)
	c.ReadTimeout = cmp.Or(c.ReadTimeout, DefaultReadTimeout)
	c.MinRest = cmp.Or(c.MinRest, DefaultMinRest)
	c.ErrorRest = cmp.Or(c.ErrorRest, DefaultErrorRest)
	c.LeaderRetry = cmp.Or(c.LeaderRetry, DefaultLeaderRetry)
	c.LeaderLease = cmp.Or(c.LeaderLease, DefaultLeaderLease)
	c.ListingEvery = max(c.ListingEvery, 0)
	if c.ListingEvery > 0 {
		// A Lane reads its listing at a pass's start: its least rest never
		// holds the listing back past LISTING_EVERY (ADR 0016).
		c.MinRest = min(c.MinRest, c.ListingEvery)
	}
	c.Backstop = schedule.Policy{Backstop: c.Backstop}.Normalised().Backstop
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Reader reads one Series page through its Site's route. The fetch package
// provides the real one; it owns the fetch gate, the politeness of a single
// request (timeout, body cap, redirects) and the classification into outcome
// words. The poller declares this interface and names only the values of
// adapters, so it never imports fetch or the browser driver fetch carries.
type Reader interface {
	Read(ctx context.Context, site, seriesURL string) adapters.Result
	// Route is the Route the Site is read over.
	Route(site string) word.Route
	// HasBrowser is false when no sidecar is configured.
	HasBrowser() bool
}

// Poller runs the Lanes. Build it with New, then call Run (or RunPass, the
// round-at-a-time seam tests use).
type Poller struct {
	st     *store.Store
	reader Reader
	cfg    Config // normalised: every default filled in
	// holder names this Poller in the Lanes' leases: unique to the
	// process, so a process whose sessions were cut takes its own Lanes
	// back at once (ADR 0018).
	holder string

	mu    sync.Mutex
	lanes map[string]*lane
	// browserDownUntil is shared by every browser Lane of this process.
	browserDownUntil time.Time
	// repeated keeps a failure every Lane tick meets (the lease asked of a
	// database that is away) to a line a minute.
	repeated *repeat.Log
}

// New returns a Poller reading through r and writing through st, with c's
// zero fields at their defaults.
func New(st *store.Store, r Reader, c Config) *Poller {
	p := &Poller{st: st, reader: r, cfg: c.normalised(), lanes: map[string]*lane{}, holder: newHolder()}
	p.repeated = repeat.New(p.cfg.Logger, p.cfg.Now)
	return p
}

// lane is one Site's in-process state.
type lane struct {
	pass sync.Mutex // one pass of a Lane at a time in this process
	lock *store.LaneLock
	// leaseLeft is what the lease another holder has was found to have
	// left, when this process last asked (leaderWait).
	leaseLeft time.Duration
	// askBackoff is the wait after a lease ask that failed (askAgainIn).
	askBackoff time.Duration
	lastPrune  time.Time
	readMu     sync.Mutex // guards lastRead: a Test read spaces itself against the pass
	lastRead   time.Time  // real time of the last request to the Site (spacing)
	// unlogged holds pass rows the database refused, oldest first, written
	// ahead of the next pass's own row (bounded: maxUnlogged).
	unlogged []store.PassRow
	// listingAt is when the next listing read is owed (zero: at once), and
	// walk what the last walks saw (ADR 0016).
	listingAt time.Time
	walk      schedule.Walk
	// listing: the Lane reads a listing that is not broken, so the
	// schedule stretches its cadence reads (schedule.Policy.Listing). Set
	// at each pass's start; read by the pass's writes.
	listing atomic.Bool

	// recorded is the hour whose failing figure this Lane last wrote
	// (recordFailing); freshnessAsked when it last asked for the freshness
	// figure to be recomputed (refreshFreshness).
	recorded       time.Time
	freshnessAsked time.Time
}

// requested records a request to the Site just now, for the spacing, under
// readMu: a Test read may run beside the pass or the cover fetch.
func (l *lane) requested() {
	l.readMu.Lock()
	l.lastRead = time.Now()
	l.readMu.Unlock()
}

// maxUnlogged bounds the pass rows a Lane keeps through an outage: a day of
// hourly passes and then some.
const maxUnlogged = 64

// Pass is what one pass did.
type Pass struct {
	Site       string
	StartedAt  time.Time
	FinishedAt time.Time
	// Skip is word.SkipNone for a pass that ran, else the early-return path taken.
	Skip    word.Skip
	Due     int
	Checked int
	Counts  word.Counts
	// Rest is how long the Lane wants to rest before its next pass.
	Rest time.Duration
	// Broken is true when two refusals stopped the loop.
	Broken bool
	// Listing is what the pass did with the Site's listing.
	Listing store.ListingPass
}

func (p *Poller) lane(site string) *lane {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.lanes[site]
	if !ok {
		l = &lane{}
		p.lanes[site] = l
	}
	return l
}

func (p *Poller) now() time.Time { return p.cfg.Now() }

func (p *Poller) log() *slog.Logger { return p.cfg.Logger }

// failed logs a database step that failed, at Error, unless err is the
// Lanes' own stop: a step cut short by context.Canceled at shutdown is not a
// fault, and an Error line for it made every clean stop read like a crash
// (issue 22, item 10). That one is a Debug line. A deadline that ran out is
// still an Error.
func (p *Poller) failed(msg string, err error, args ...any) {
	level := slog.LevelError
	if errors.Is(err, context.Canceled) {
		level = slog.LevelDebug
	}
	p.log().Log(context.Background(), level, msg, append(args, "err", err)...)
}

// clampRest keeps a rest within [0, DefaultRest].
func (p *Poller) clampRest(d time.Duration) time.Duration {
	return max(0, min(d, p.cfg.DefaultRest))
}

// BrowserDownUntil reports until when this process treats the sidecar as
// down (zero when it is not).
func (p *Poller) BrowserDownUntil() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.browserDownUntil
}

func (p *Poller) markBrowserDown(at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.browserDownUntil = at.Add(p.cfg.BrowserDownFor)
}

// leaseNotTaken is logged when the lease could not be asked for: on every
// tick of the Lane while the database is away, so through repeat.Log.
const leaseNotTaken = "lane lease not taken"

// leading reports whether this process holds site's Lane lease, taking it
// when free; an error means the lease could not even be asked for. A held
// lease is renewed first: one that another holder took (this process could
// not renew it in time), or that the database could not renew, is given up,
// and the Lane steps down until it takes the lease again (ADR 0018). The
// caller holds l.pass.
func (p *Poller) leading(ctx context.Context, site string, l *lane) (bool, error) {
	if l.lock != nil {
		err := l.lock.Renew(ctx)
		if err == nil {
			return true, nil
		}
		p.log().Warn("lane lease lost", "site", site, "err", err)
		l.lock.Release()
		l.lock = nil
	}
	lock, left, err := p.st.TryLockLane(ctx, site, store.LeaseAsk{Holder: p.holder, TTL: p.cfg.LeaderLease, Pace: p.cfg.PollEvery[site]})
	if err != nil {
		p.repeated.Fail(slog.LevelWarn, site, leaseNotTaken, "site", site, "err", err)
		return false, err
	}
	p.repeated.Clear(site, leaseNotTaken, "site", site)
	if lock == nil {
		l.leaseLeft = left
		return false, nil
	}
	l.lock = lock
	p.log().Info("lane lease taken", "site", site)
	return true, nil
}

// Close releases every Lane lock this process holds. Run calls it on exit.
func (p *Poller) Close() {
	p.mu.Lock()
	lanes := make([]*lane, 0, len(p.lanes))
	for _, l := range p.lanes {
		lanes = append(lanes, l)
	}
	p.mu.Unlock()
	for _, l := range lanes {
		l.pass.Lock()
		if l.lock != nil {
			l.lock.Release()
			l.lock = nil
		}
		l.pass.Unlock()
	}
}

// RunPass runs one pass of site's Lane now and returns what it did. It is
// the round-at-a-time seam: the Lane loop calls it, and so do the tests.
func (p *Poller) RunPass(ctx context.Context, site string) Pass {
	l := p.lane(site)
	l.pass.Lock()
	defer l.pass.Unlock()
	return p.runPass(ctx, site, l, false)
}

// runPass is RunPass for a caller that holds l.pass. led says the caller
// has just asked leading and been told yes (the Lane loop), so the pass does
// not ask again: that would be a second ping of the lock's session on every
// pass, microseconds after the first.
//
// A pass reads the listing when one is owed, then the due Series in the
// schedule's order (ADR 0016), until none is due, the pass has lasted its
// length, or one of the loop's stops.
func (p *Poller) runPass(ctx context.Context, site string, l *lane, led bool) Pass {
	start := p.now()
	pass := Pass{Site: site, StartedAt: start}
	// Every return path passes through here: the pass-log row, then the
	// notifier (two of its conditions live on early returns).
	defer func() { p.finish(ctx, l, &pass) }()

	ln, skip, rest := p.skip(ctx, site, l, led, start)
	if skip != word.SkipNone {
		pass.Skip, pass.Rest = skip, rest
		return pass
	}
	w := p.readListing(ctx, site, l, ln)
	pass.Listing = w.ListingPass
	if w.browserDown {
		pass.Rest = p.clampRest(p.BrowserDownUntil().Sub(p.now()) / 2)
		return pass
	}
	res, err := p.pollDue(ctx, site, l, ln, start, w)
	if err != nil {
		p.failed("due query failed", err, "site", site)
		pass.Skip, pass.Rest = word.SkipDueError, p.cfg.ErrorRest
		return pass
	}
	pass.Due, pass.Counts, pass.Checked, pass.Broken, pass.Rest = res.due, res.counts, res.checked, res.broken, res.rest
	if res.laneServed && !ln.ForcePollAt.IsZero() {
		if err := p.st.ServeLaneForce(ctx, site, ln.ForcePollAt); err != nil {
			p.failed("lane force not served", err, "site", site)
		}
	}
	switch {
	case res.more:
		// Series are still due: the next pass follows after one spacing,
		// the slot a cover may take (covers are fetched only in a rest).
		pass.Rest = p.cfg.Spacing
	case pass.Rest == 0 && !pass.Broken:
		pass.Rest = p.nextRest(ctx, site, l)
	}
	if res.retryAfter > 0 {
		// A 429 is the Site setting its own pace.
		pass.Rest = p.clampRest(max(pass.Rest, res.retryAfter))
	}
	return pass
}

// skip answers whether the pass returns before reading anything, with the
// Skip value its row records and the rest the Lane takes; SkipNone with the
// Lane's row when the pass goes on. led says the caller has just asked
// leading and been told yes (the Lane loop), so the pass does not ask again.
func (p *Poller) skip(ctx context.Context, site string, l *lane, led bool, start time.Time) (store.Lane, word.Skip, time.Duration) {
	errorRest := p.cfg.ErrorRest
	if ctx.Err() != nil {
		return store.Lane{}, word.SkipStopped, 0
	}
	if !led {
		switch lead, err := p.leading(ctx, site, l); {
		case err != nil:
			return store.Lane{}, word.SkipLockError, errorRest
		case !lead:
			return store.Lane{}, word.SkipNotLeader, p.leaderWait(l)
		}
	}
	ln, err := p.st.GetLane(ctx, site)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return ln, word.SkipNoLane, p.cfg.DefaultRest
	case err != nil:
		p.failed("lane row unreadable", err, "site", site)
		return ln, word.SkipDBError, errorRest
	case ln.PausedUntil.After(start):
		return ln, word.SkipPaused, p.clampRest(ln.PausedUntil.Sub(start))
	case ln.RefuseUntil.After(start):
		return ln, word.SkipRefusing, p.clampRest(ln.RefuseUntil.Sub(start))
	}
	if p.reader.Route(site) == word.RouteBrowser {
		if !p.reader.HasBrowser() {
			return ln, word.SkipNoBrowser, p.cfg.DefaultRest
		}
		if down := p.BrowserDownUntil(); down.After(start) {
			return ln, word.SkipBrowserDown, p.clampRest(down.Sub(start))
		}
	}
	return ln, word.SkipNone, 0
}

// polled is what the polling loop did.
type polled struct {
	due        int // Series the pass owed: counted at its start, or taken, the more
	taken      int // Series the due query gave the pass
	counts     word.Counts
	checked    int
	retryAfter time.Duration // the longest Retry-After a refusal carried
	// laneServed: no Series checked before the Lane's Forced Poll is left
	// unread (the due query gave a Series of a later rank, or none).
	laneServed bool
	// more: the pass ended on its length or MaxPerPass with Series still
	// due; the next pass follows at once.
	more bool
	// broken: two refusals stopped the loop (the Lane now refuses).
	broken bool
	rest   time.Duration // the rest the loop asks for; 0 leaves it to nextRest
	// stopped: a stop ended the loop (shutdown, lost sidecar or database).
	stopped bool
}

// pollDue Polls the due Series batch by batch, asking the due query again
// after each batch, so a Forced Poll or a Sighting that arrives mid-pass is
// read within one batch (ADR 0016). A Series is tried at most once a pass.
// It ends when none is due, at the pass's length or MaxPerPass, or at one
// of the loop's stops. Only a failing due count or first due query is an
// error: a later one ends the pass as it stands.
func (p *Poller) pollDue(ctx context.Context, site string, l *lane, ln store.Lane, start time.Time, w walked) (res polled, err error) {
	owed, stopped, err := p.owedAtStart(ctx, site, ln)
	if stopped || err != nil {
		res.stopped = stopped
		return res, err
	}
	defer func() { res.due = max(owed, res.taken) }()
	refusals := 0
	if w.refused {
		refusals, res.retryAfter = 1, w.retryAfter
	}
	tried := map[string]bool{}
	// stale is how many Series this pass tried the last due query still
	// named: their check stamp failed, so they stay due at the head of the
	// order, and the next query reaches past them to the Series behind.
	stale := 0
	until := start.Add(p.passLength())
	for !res.stopped && !res.broken {
		limit := p.batchLimit(res.taken)
		// The pass has lasted its length or read MaxPerPass: it ends, with
		// more only when the due query still names an untried Series (a
		// claim of more with nothing due made a pass that ended the stall
		// run, store.StallRun, so a Site of hanging reads never stalled).
		spent := limit <= 0 || (res.taken > 0 && !p.now().Before(until))
		// One more than the batch tells whether the Lane's Forced Poll
		// is served once this batch is read.
		ask := limit + 1 + stale
		got, err := p.st.DueSeries(ctx, site, store.DueAsk{
			Now: p.now(), Floor: p.cfg.PollEvery[site], LaneForce: ln.ForcePollAt, Limit: ask})
		if err != nil {
			if res.taken == 0 && ctx.Err() == nil {
				return res, err
			}
			p.failed("due query failed mid-pass", err, "site", site)
			break
		}
		whole := len(got) < ask // every Series still due is in got
		batch := untried(got, tried)
		stale = len(got) - len(batch)
		if len(batch) == 0 {
			if whole {
				res.laneServed = true
				break
			}
			continue
		}
		if spent {
			res.more = true
			break
		}
		served := (whole && len(batch) <= limit) || (len(batch) > limit && batch[limit].Rank > int(schedule.LaneForced))
		batch = batch[:min(limit, len(batch))]
		markTried(batch, tried)
		res.taken += len(batch)
		p.pollBatch(ctx, site, l, batch, &res, &refusals)
		res.laneServed = served && !res.stopped && !res.broken
	}
	return res, nil
}

// owedAtStart is what the pass owes, counted once before it reads any
// (after the listing walk, whose marks it owes too), so a pass its length
// or MaxPerPass cuts short still records all it owed (CONTEXT.md, Pass; the
// stall condition reads due > 0). A capped count on the due query's own
// indexes (store.CountDue); a Series made due mid-pass and read counts
// through taken. stopped: shutdown cut the count, and the pass ends as it
// stands, as at the first due query.
func (p *Poller) owedAtStart(ctx context.Context, site string, ln store.Lane) (owed int, stopped bool, err error) {
	owed, err = p.st.CountDue(ctx, site, store.DueAsk{Now: p.now(), Floor: p.cfg.PollEvery[site], LaneForce: ln.ForcePollAt})
	if err != nil && ctx.Err() != nil {
		return 0, true, nil
	}
	return owed, false, err
}

// batchLimit is how many Series the next batch may take, taken already
// read this pass: batchSize, and no more than MaxPerPass leaves.
func (p *Poller) batchLimit(taken int) int {
	if p.cfg.MaxPerPass > 0 {
		return min(batchSize, p.cfg.MaxPerPass-taken)
	}
	return batchSize
}

// untried is the batch without the Series this pass already tried (one
// whose check stamp failed stays due).
func untried(batch []store.Due, tried map[string]bool) []store.Due {
	out := batch[:0]
	for _, d := range batch {
		if !tried[d.SeriesID] {
			out = append(out, d)
		}
	}
	return out
}

func markTried(batch []store.Due, tried map[string]bool) {
	for _, d := range batch {
		tried[d.SeriesID] = true
	}
}

// passLength is the most a pass lasts: until the next listing read is
// owed, or DefaultPassLength without a listing.
func (p *Poller) passLength() time.Duration {
	if p.cfg.ListingEvery > 0 {
		return p.cfg.ListingEvery
	}
	return DefaultPassLength
}

// pollBatch Polls a batch in order until one of the loop's stops:
// shutdown, a lost sidecar, an unreachable database, two refusals.
func (p *Poller) pollBatch(ctx context.Context, site string, l *lane, batch []store.Due, res *polled, refusals *int) {
	browser := p.reader.Route(site) == word.RouteBrowser
	for i, d := range batch {
		if ctx.Err() != nil || (browser && p.BrowserDownUntil().After(p.now())) || l.lost() || !p.space(ctx, l) {
			// Shutdown, a sibling browser Lane lost the sidecar mid-pass,
			// or another process took the Lane's lease (ADR 0018).
			res.stopped = true
			return
		}
		r, counted, gone := p.pollOne(ctx, l, d.Series)
		if !counted {
			continue
		}
		res.counts.Add(r.Outcome)
		if r.Checked {
			res.checked++
		}
		if gone {
			// The rest stay due (unstamped) for the pass after the
			// database returns; nothing is lost by not trying them now.
			p.log().Error("database unreachable; pass stopped", "site", site, "left", len(batch)-i-1)
			res.stopped = true
			return
		}
		switch {
		case r.Outcome == word.Refused:
			*refusals++
			res.retryAfter = max(res.retryAfter, r.RetryAfter)
			if *refusals >= 2 {
				// Not an early return: the pass ends as one that ran and
				// writes SkipNone.
				res.broken, res.rest = true, p.refuse(ctx, site, res.retryAfter)
				return
			}
		case r.Outcome == word.Unreachable && browser:
			// The sidecar is ours and it is gone: no further browser
			// Series can be read this pass. Come back inside the
			// browser-down window, so this Lane's next pass records
			// browser-down: a dead sidecar is sidecar-down, and a run of
			// stall passes (which this pass is) never grows out of it.
			p.markBrowserDown(p.now())
			res.stopped, res.rest = true, p.clampRest(p.BrowserDownUntil().Sub(p.now())/2)
			return
		}
	}
}

// refuse records that the Site refused twice: the Lane waits RefuseFor, or
// the Site's own longer Retry-After, never more than MaxRefuse. It returns
// the Lane's rest.
func (p *Poller) refuse(ctx context.Context, site string, retryAfter time.Duration) time.Duration {
	wait := min(max(p.cfg.RefuseFor, retryAfter), p.cfg.MaxRefuse)
	if err := p.st.SetLaneRefusal(context.WithoutCancel(ctx), site, p.now().Add(wait)); err != nil {
		p.log().Error("lane refusal not recorded", "site", site, "err", err)
	}
	return p.clampRest(wait)
}

// space waits until Spacing has passed since the Lane's last request (across
// passes too: a forced wake right after a pass is still polite). It
// reports false when ctx ended first.
func (p *Poller) space(ctx context.Context, l *lane) bool {
	l.readMu.Lock()
	last := l.lastRead
	l.readMu.Unlock()
	if d := p.cfg.Spacing - time.Since(last); p.cfg.Spacing > 0 && d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return ctx.Err() == nil
}

// nextRest is the time until the Lane next owes a read: a Series the
// schedule names (store.NextDue) or the listing, bounded, and at least
// MinRest, so a Lane whose passes achieve nothing never spins (a wake ends
// a rest at once).
func (p *Poller) nextRest(ctx context.Context, site string, l *lane) time.Duration {
	next, some, err := p.st.NextDue(ctx, site, p.cfg.PollEvery[site])
	if err != nil {
		p.failed("next due unreadable", err, "site", site)
		return p.cfg.ErrorRest
	}
	rest := p.cfg.DefaultRest
	if some {
		rest = next.Sub(p.now())
	}
	if _, ok := p.reader.(ListingReader); ok && p.cfg.ListingEvery > 0 {
		rest = min(rest, l.listingAt.Sub(p.now()))
	}
	return p.clampRest(max(rest, p.cfg.MinRest))
}

// finish writes the pass-log row and calls the notifier. It runs on every
// return path, with a context that survives shutdown for a moment so the
// last pass is still recorded.
func (p *Poller) finish(ctx context.Context, l *lane, pass *Pass) {
	pass.FinishedAt = p.now()
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	row := store.PassRow{
		Site: pass.Site, StartedAt: pass.StartedAt, FinishedAt: pass.FinishedAt,
		Due: pass.Due, Checked: pass.Checked, Skip: pass.Skip, Counts: pass.Counts,
		ListingPass: pass.Listing,
	}
	// Rows an outage kept from the log go first, so the log stays in order.
	rows := append(l.unlogged, row)
	l.unlogged = nil
	for i, r := range rows {
		if err := p.st.InsertPass(wctx, r); err != nil {
			l.unlogged = rows[i:]
			if n := len(l.unlogged) - maxUnlogged; n > 0 {
				l.unlogged = l.unlogged[n:]
				p.log().Error("pass rows dropped", "site", pass.Site, "rows", n)
			}
			p.log().Error("pass not logged", "site", pass.Site, "skip", pass.Skip,
				"waiting", len(l.unlogged), "err", err)
			break
		}
	}
	if p.cfg.Observer != nil {
		p.cfg.Observer.Passed(pass.Site, pass.Skip, pass.Counts)
	}
	p.notify(ctx, pass)
}

// notify calls the Notifier, if any: its error is logged, a panic in it is
// recovered, and it gets a context of its own that survives shutdown for a
// moment.
func (p *Poller) notify(ctx context.Context, pass *Pass) {
	if p.cfg.Notifier == nil {
		return
	}
	nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			p.log().Error("notifier panicked", "site", pass.Site, "panic", fmt.Sprint(r))
		}
	}()
	if err := p.cfg.Notifier(nctx, pass.Site, pass.StartedAt); err != nil {
		p.repeated.Fail(slog.LevelError, pass.Site, notifierFailed, "site", pass.Site, "err", err)
		return
	}
	p.repeated.Clear(pass.Site, notifierFailed, "site", pass.Site)
}

// notifierFailed is logged when the pass's notices or announcements could
// not be checked: on every pass while the cause lasts.
const notifierFailed = "notifier failed"

// pollOne Polls one Series: stamp, read, write. counted is false when the
// Series was not this pass's to poll (its stamp moved: another pass took it).
// gone is true when the check stamp found the database unreachable.
// A panic anywhere inside is recovered, counted as errors and written as
// errors: an adapter that panics on one page every hour is exactly the quiet
// breakage the failure row exists to make findable.
func (p *Poller) pollOne(ctx context.Context, l *lane, s store.Series) (res adapters.Result, counted, gone bool) {
	begin := time.Now()
	now := p.now()
	defer func() {
		if r := recover(); r != nil {
			p.log().Error("poll panicked", "site", s.Site, "series_id", s.SeriesID,
				"outcome", word.Errors, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			p.recordFailure(wctx, s, word.Errors, now)
			res, counted = adapters.Result{Outcome: word.Errors}, true
		}
	}()

	next := p.policy(s.Site).Next(scheduled(s), now)
	failing, err := p.st.StampChecked(ctx, s.Site, s.SeriesID, s.CheckedAt, now, next)
	if errors.Is(err, store.ErrAlreadyChecked) {
		p.log().Info("series taken by another pass", "site", s.Site, "series_id", s.SeriesID)
		return adapters.Result{}, false, false
	}
	if errors.Is(err, context.Canceled) {
		// Shutdown came before the stamp: nothing was read, nothing said.
		p.log().Info("poll interrupted by shutdown", "site", s.Site, "series_id", s.SeriesID)
		return adapters.Result{}, false, false
	}
	if err != nil {
		// A failed check stamp is errors, not checked, and no fetch: a
		// page read without its stamp would be retried every pass.
		p.log().Error("check stamp failed", "site", s.Site, "series_id", s.SeriesID,
			"outcome", word.Errors, "err", err)
		p.recordFailure(ctx, s, word.Errors, now)
		return adapters.Result{Outcome: word.Errors}, true, store.Unreachable(err)
	}

	rctx, cancel := context.WithTimeout(ctx, p.cfg.ReadTimeout)
	res = p.reader.Read(rctx, s.Site, s.URL)
	cancel()
	l.requested()
	if ctx.Err() != nil && res.Outcome != word.OK {
		p.takeBackStamp(ctx, s, now)
		return adapters.Result{}, false, false
	}
	// The read happened; its writes should land even if shutdown began.
	ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	res = p.record(ctx, s, res, failing, now, begin)
	p.serveForce(ctx, s)
	return res, true, false
}

// takeBackStamp undoes the check stamp of a read our own shutdown cut short:
// that says nothing about the Series and is no read of it, so a Forced Poll
// (or any urgent mark) stays pending for the next process instead of
// counting as served (CONTEXT.md, Forced Poll).
func (p *Poller) takeBackStamp(ctx context.Context, s store.Series, stamped time.Time) {
	p.log().Info("poll interrupted by shutdown", "site", s.Site, "series_id", s.SeriesID)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := p.st.UnstampChecked(wctx, s.Site, s.SeriesID, stamped, s.CheckedAt, s.NextReadAt); err != nil {
		p.log().Error("check stamp not taken back", "site", s.Site, "series_id", s.SeriesID, "err", err)
	}
}

// serveForce marks a Forced Poll served only now that the read has finished
// and its outcome is written: the owner's page says "served" from this,
// never from the check stamp written as the read began.
func (p *Poller) serveForce(ctx context.Context, s store.Series) {
	if s.ForcePollAt.IsZero() {
		return
	}
	if err := p.st.ServeSeriesForce(ctx, s.Site, s.SeriesID, s.ForcePollAt); err != nil {
		p.failed("forced poll not marked served", err, "site", s.Site, "series_id", s.SeriesID)
	}
}

// record writes what one read said about the Series (CONTEXT.md, Outcome)
// and answers the result as counted: an ok applies the facts, a read that
// says nothing about the Series writes nothing, any other outcome is its
// failure row.
func (p *Poller) record(ctx context.Context, s store.Series, res adapters.Result, failing bool, now, begin time.Time) adapters.Result {
	if !res.Outcome.Valid() {
		res = adapters.Result{Outcome: word.Errors, Checked: res.Checked, Status: res.Status,
			Err: fmt.Errorf("poller: reader returned outcome %q", res.Outcome)}
	}
	switch res.Outcome {
	case word.Refused, word.Unreachable:
		// No statement at all: the Site's mood, or our own sidecar or
		// network (docs/adr/0022), says nothing about this Series, in
		// either direction.
		p.log().Info("poll said nothing", "site", s.Site, "series_id", s.SeriesID,
			"outcome", res.Outcome, "duration", time.Since(begin), "err", res.Err)
	case word.OK:
		if err := p.writeOK(ctx, s, res.Facts, failing, now); err != nil {
			p.log().Error("write after read failed", "site", s.Site, "series_id", s.SeriesID,
				"outcome", word.Errors, "err", err)
			res.Outcome = word.Errors
			p.recordFailure(ctx, s, word.Errors, now)
		}
	default:
		p.log().Warn("poll failed", "site", s.Site, "series_id", s.SeriesID,
			"outcome", res.Outcome, "status", res.Status, "duration", time.Since(begin), "err", res.Err)
		p.recordFailure(ctx, s, res.Outcome, now)
		if res.Outcome == word.NoChapter {
			p.writeFace(ctx, s, res.Facts)
		}
	}
	return res
}

// writeFace keeps the title and cover address of a page read with no
// chapter on it (a Series announced before its first chapter): the page is
// the Series' own, so its face holds even without a number. A page the
// adapter could not parse carries no facts and changes nothing.
func (p *Poller) writeFace(ctx context.Context, s store.Series, f adapters.Facts) {
	c := store.ReadChanges{Face: true, Title: cmp.Or(f.Title, s.Title), Cover: cmp.Or(f.CoverURL, s.CoverURL)}
	if c.Title == s.Title && c.Cover == s.CoverURL {
		return
	}
	if err := p.st.ApplyRead(ctx, s.Site, s.SeriesID, c); err != nil {
		p.failed("title and cover not written", err, "site", s.Site, "series_id", s.SeriesID)
	}
}

func (p *Poller) recordFailure(ctx context.Context, s store.Series, o word.Outcome, now time.Time) {
	if err := p.st.RecordFailure(ctx, s.Site, s.SeriesID, o, now); err != nil {
		p.failed("failure row not written", err, "site", s.Site, "series_id", s.SeriesID, "outcome", o)
	}
}

// writeOK applies a correct read through one store call. Each change is
// written only when it is one, so a healthy, unchanged Series costs nothing
// here, and several changes land together or not at all.
func (p *Poller) writeOK(ctx context.Context, s store.Series, f adapters.Facts, failing bool, now time.Time) error {
	c := store.ReadChanges{ClearFailure: failing}
	if f.Completed != !s.SiteCompletedAt.IsZero() {
		c.Completed = true
		if f.Completed {
			c.CompletedAt = now
		}
	}
	switch {
	case f.HasLatest && latestChanges(s, f):
		c.Latest, c.LatestNum, c.LatestURL = true, f.LatestChapter, f.LatestChapterURL
		if arrives(s, f) {
			c.Arrival = p.arrival(s, now)
		}
	case f.HasLatest && showsMore(s, f):
		c.Seen, c.SeenNum = true, f.LatestChapter
	}
	c.Title, c.Cover = cmp.Or(f.Title, s.Title), cmp.Or(f.CoverURL, s.CoverURL)
	c.Face = c.Title != s.Title || c.Cover != s.CoverURL
	if err := p.st.ApplyRead(ctx, s.Site, s.SeriesID, c); err != nil {
		return err
	}
	if a := c.Arrival; a != nil && p.cfg.Observer != nil {
		// store.delaySQL's figure: confirmed_at − noticed_at, never below 0.
		p.cfg.Observer.Detected(s.Site, max(a.At.Sub(a.NoticedAt), 0))
	}
	return nil
}

// arrives reports whether a read number that changes the row is a new
// chapter (CONTEXT.md, Arrival): above the number a Poll last stood
// behind, or equal to a number only a Sighting stood behind. The first read
// of a Series fills it in; it is not news.
func arrives(s store.Series, f adapters.Facts) bool {
	if s.LatestChapter == nil {
		return false
	}
	read, _ := word.ParseChapter(f.LatestChapter)
	cur, ok := word.ParseChapter(*s.LatestChapter)
	if !ok {
		return false
	}
	c := read.Compare(cur)
	return c > 0 || (c == 0 && s.LatestRaisedBy != nil)
}

// arrival is the Arrival a read at now records: its first evidence (the
// listing or a Sighting since the last check, else that check), and the
// schedule it teaches.
func (p *Poller) arrival(s store.Series, now time.Time) *store.Arrival {
	a := &store.Arrival{At: now, NoticedAt: s.CheckedAt}
	if s.ListedAt.After(s.CheckedAt) {
		a.NoticedAt, a.Listed = s.ListedAt, true
	}
	if s.SightedAt.After(s.CheckedAt) && (!a.Listed || s.SightedAt.Before(a.NoticedAt)) {
		a.NoticedAt, a.Listed = s.SightedAt, false
	}
	if a.NoticedAt.IsZero() || a.NoticedAt.After(now) {
		a.NoticedAt = now
	}
	f := scheduled(s)
	a.Cadence = schedule.Learn(f.Cadence, f.ArrivedAt, now)
	f.Cadence, f.ArrivedAt = a.Cadence, now
	a.Next = p.policy(s.Site).Next(f, now)
	return a
}

// scheduled is what the schedule knows of a Series.
func scheduled(s store.Series) schedule.Series {
	return schedule.Series{Bookmarked: s.BookmarkCount > 0,
		Cadence: time.Duration(s.CadenceS) * time.Second, ArrivedAt: s.ArrivedAt}
}

// policy is the schedule of site's Lane: its pace as the floor, the
// backstop, and whether its listing watches the Site.
func (p *Poller) policy(site string) schedule.Policy {
	return schedule.Policy{Floor: p.cfg.PollEvery[site], Backstop: p.cfg.Backstop,
		Listing: p.lane(site).listing.Load()}.Normalised()
}

// showsMore reports whether a read number that changes no Latest Chapter
// (it is below a Reader's raised number or the owner's Correction) is
// above every number the page showed before: the Sighting bound's base
// (CONTEXT.md, Sighting). A healthy, unchanged read shows no more, so it
// stays one statement.
func showsMore(s store.Series, f adapters.Facts) bool {
	read, ok := word.ParseChapter(f.LatestChapter)
	if !ok {
		return false
	}
	if s.PolledChapter == nil {
		return true
	}
	return read.Compare(word.Chapter(*s.PolledChapter)) > 0
}

// latestChanges reports whether a read number changes the row: it is above
// the current one (raise), or equal while a Reader's attribution or a
// different chapter address stands (confirm). A number below changes
// nothing: Latest Chapter is the highest number known. A read number that
// is not a chapter number changes nothing; a stored one that is not (never
// written by this server) is replaced.
func latestChanges(s store.Series, f adapters.Facts) bool {
	read, ok := word.ParseChapter(f.LatestChapter)
	if !ok {
		return false
	}
	if s.LatestChapter == nil {
		return true
	}
	cur, ok := word.ParseChapter(*s.LatestChapter)
	if !ok {
		return true
	}
	switch read.Compare(cur) {
	case 1:
		return true
	case 0:
		return s.LatestRaisedBy != nil || (f.LatestChapterURL != "" && f.LatestChapterURL != s.LatestChapterURL)
	default:
		return false
	}
}

// newHolder names this Poller in the Lanes' leases: the host and process,
// for the owner reading the Lanes page, and a random part, so two Pollers
// never share a name (two in one test process, or a pid reused).
func newHolder() string {
	host, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", cmp.Or(host, "host"), os.Getpid(), hex.EncodeToString(b[:]))
}
