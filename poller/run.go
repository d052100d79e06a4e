package poller

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
)

// Run starts one Lane per Site and blocks until ctx is cancelled and every
// Lane has finished its current Poll and recorded its pass. It then
// releases the Lane locks, so a replica can take over at once.
func (p *Poller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, site := range p.cfg.Sites {
		wg.Go(func() { p.runLane(ctx, site) })
	}
	wg.Wait()
	p.flushUnlogged()
	p.Close()
}

// flushTimeout bounds the last try at writing held-back pass rows at
// shutdown, for all Lanes together.
const flushTimeout = 5 * time.Second

// flushUnlogged gives the pass rows an outage held back (lane.unlogged) one
// last bounded try once every Lane has stopped, and reports any still
// unwritten in one log line with their count, so none vanishes silently.
func (p *Poller) flushUnlogged() {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	p.mu.Lock()
	lanes := make([]*lane, 0, len(p.lanes))
	for _, l := range p.lanes {
		lanes = append(lanes, l)
	}
	p.mu.Unlock()
	lost := 0
	var sites []string
	var last error
	for _, l := range lanes {
		l.pass.Lock()
		for i, r := range l.unlogged {
			if err := p.st.InsertPass(ctx, r); err != nil {
				lost += len(l.unlogged) - i
				sites = append(sites, r.Site)
				last = err
				break
			}
		}
		l.unlogged = nil
		l.pass.Unlock()
	}
	if lost > 0 {
		p.log().Error("pass rows not written at shutdown", "rows", lost, "sites", strings.Join(sites, ","), "err", last)
	}
}

// runLane is one Lane: pass, rest, pass. A Lane of a process that is not the
// leader waits for the lease without writing pass rows, so the pass log of a
// Site reads as one Lane's history whatever the number of replicas.
func (p *Poller) runLane(ctx context.Context, site string) {
	l := p.lane(site)
	p.log().Info("lane started", "site", site)
	defer p.log().Info("lane stopped", "site", site)
	for ctx.Err() == nil {
		l.pass.Lock()
		lead, err := p.leading(ctx, site, l) // an error is logged; retry later
		var pass Pass
		if lead {
			// Still under l.pass, so the answer holds for the whole pass.
			pass = p.safePass(ctx, site, l)
		}
		wait := l.askAgainIn(err, p.leaderWait(l))
		l.pass.Unlock()
		if !lead {
			p.rest(ctx, site, l, wait, nil)
			continue
		}
		p.prune(ctx, site, l)
		p.recordFailing(ctx, site, l)
		p.refreshFreshness(ctx, site, l)
		var meanwhile func(context.Context)
		if coversWelcome(pass) {
			meanwhile = func(rctx context.Context) { p.fetchCovers(rctx, site, l) }
		}
		p.rest(ctx, site, l, pass.Rest, meanwhile)
	}
}

// safePass runs a pass of a Lane this process leads (the caller holds
// l.pass); a panic outside any one Poll (the pass's own code) is logged and
// the Lane rests its error rest and goes on.
func (p *Poller) safePass(ctx context.Context, site string, l *lane) (pass Pass) {
	defer func() {
		if r := recover(); r != nil {
			p.log().Error("pass panicked", "site", site, "panic", r)
			pass = Pass{Site: site, Rest: p.cfg.ErrorRest}
		}
	}()
	return p.runPass(ctx, site, l, true)
}

// rest waits d (at most DefaultRest), or until the Lane is woken, or ctx
// ends. A wake comes through the database, and only there: the leader's
// wake session LISTENs, so a Forced Poll, Pause or Resume written by any
// process (this one's own admin pages included) ends the rest at once
// (ADR 0004). When that session dies (a database restart, a terminated
// backend, a silent cut), the Lane replaces it at once, keeping its lease
// (retake), instead of resting on the timer alone; when another process
// took the lease, the rest ends and the Lane steps down (ADR 0018). A Lane
// that does not lead has no session to hear a wake: it rests until the
// lease it found runs out (leaderWait) and asks again.
// meanwhile (nil: nothing) runs during the rest under a context that ends
// with it, so a wake also cancels whatever it has in flight; rest returns
// only after it has.
func (p *Poller) rest(ctx context.Context, site string, l *lane, d time.Duration, meanwhile func(context.Context)) {
	wctx, cancel := context.WithTimeout(ctx, p.clampRest(d))
	defer cancel()
	var done sync.WaitGroup
	if meanwhile != nil {
		done.Go(func() { meanwhile(wctx) })
	}
	p.awaitWake(wctx, site, l)
	cancel()
	done.Wait()
}

// awaitWake returns when wctx ends, the Lane is woken, or a lost wake
// session has been taken again.
func (p *Poller) awaitWake(wctx context.Context, site string, l *lane) {
	l.pass.Lock()
	lock := l.lock
	l.pass.Unlock()
	if lock == nil {
		<-wctx.Done()
		return
	}
	if err := lock.WaitWake(wctx); err != nil && wctx.Err() == nil {
		p.retake(wctx, site, l, err)
	}
}

// The backoff between attempts to replace a lost wake session.
const (
	retakeFirst = 250 * time.Millisecond
	retakeMax   = 5 * time.Second
)

// leaseSlack is added to the time another holder's lease has left, so the
// Lane asks just after it ran out rather than just before.
const leaseSlack = 100 * time.Millisecond

// leaderWait is how long a Lane that is not leader waits before it asks for
// the lease again: until the lease it found runs out, never longer than
// LeaderRetry. A holder that vanished is replaced within its lease, not
// within a fixed retry on top of it (ADR 0018). The caller holds l.pass.
func (p *Poller) leaderWait(l *lane) time.Duration {
	return min(max(l.leaseLeft, 0)+leaseSlack, p.cfg.LeaderRetry)
}

// askAgainIn is how long a Lane that does not lead waits before it asks for
// the lease again: wait, the lease's own pace, while the database answers;
// while the ask itself fails (the database is away), a backoff from
// retakeFirst to retakeMax, so a stopped database is not asked ten times a
// second by every Lane. The caller holds l.pass.
func (l *lane) askAgainIn(askErr error, wait time.Duration) time.Duration {
	if askErr == nil {
		l.askBackoff = 0
		return wait
	}
	l.askBackoff = min(max(2*l.askBackoff, retakeFirst), retakeMax)
	return max(wait, l.askBackoff)
}

// lost reports whether another process took the Lane's lease from this
// one. The caller holds l.pass.
func (l *lane) lost() bool { return l.lock != nil && l.lock.Lost() }

// retake handles a wait that ended on its session or its lease. A lease
// another process took is given up at once, and the Lane waits as a
// non-leader. A wake session that died (a database restart, a terminated
// backend, a connection cut without a word) is replaced, keeping the lease,
// with a backoff from retakeFirst to retakeMax until the database answers
// or ctx ends. It returns so the Lane passes at once: a Forced Poll written
// while no session listened sent its wake to nobody, and the pass is what
// serves it. One log line when the session is lost and one when it is
// back, however long the database is away.
func (p *Poller) retake(ctx context.Context, site string, l *lane, cause error) {
	if errors.Is(cause, store.ErrLaneLost) {
		p.stepDown(site, l, cause)
		return
	}
	p.log().Warn("lane wake session lost; taking it again", "site", site, "err", cause)
	delay := retakeFirst
	for attempts := 1; ; attempts++ {
		l.pass.Lock()
		err := store.ErrLaneLost
		if l.lock != nil {
			err = l.lock.Rewake(ctx)
		}
		l.pass.Unlock()
		switch {
		case err == nil:
			p.log().Info("lane wake session taken again", "site", site, "attempts", attempts)
			return
		case errors.Is(err, store.ErrLaneLost):
			p.stepDown(site, l, err)
			return
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(2*delay, retakeMax)
	}
}

// stepDown gives up a lease another process took.
func (p *Poller) stepDown(site string, l *lane, cause error) {
	l.pass.Lock()
	defer l.pass.Unlock()
	if l.lock != nil {
		p.log().Warn("lane lease lost", "site", site, "err", cause)
		l.lock.Release()
		l.lock = nil
	}
}

// prune deletes pass-log rows older than PassRetention days, Arrivals
// older than ArrivalRetention and orphans older than OrphanRetention, at
// most hourly per Lane.
func (p *Poller) prune(ctx context.Context, site string, l *lane) {
	now := p.now()
	if !l.lastPrune.IsZero() && now.Sub(l.lastPrune) < time.Hour {
		return
	}
	l.lastPrune = now
	days := p.cfg.PassRetention
	before := now.Add(-time.Duration(days) * 24 * time.Hour)
	n, err := p.st.PrunePasses(ctx, site, before)
	if err != nil {
		p.failed("pass log not pruned", err, "site", site)
		return
	}
	if n > 0 {
		p.log().Info("pass log pruned", "site", site, "rows", n)
	}
	n, err = p.st.PruneArrivals(ctx, site, now.Add(-ArrivalRetention))
	if err != nil {
		p.failed("arrivals not pruned", err, "site", site)
		return
	}
	if n > 0 {
		p.log().Info("arrivals pruned", "site", site, "rows", n)
	}
	p.deleteOrphans(ctx, site, now)
}

// deleteOrphans deletes one batch of site's orphans older than
// ORPHAN_RETENTION (ADR 0024), with one line in the log; a larger backlog
// goes a batch per prune.
func (p *Poller) deleteOrphans(ctx context.Context, site string, now time.Time) {
	keep := p.cfg.OrphanRetention
	if keep <= 0 {
		return
	}
	n, err := p.st.DeleteOrphans(ctx, site, now.Add(-keep))
	if err != nil {
		p.failed("orphans not deleted", err, "site", site)
		return
	}
	if n > 0 {
		p.log().Info("orphans deleted", "site", site, "count", n, "retention", keep.String())
	}
}

// ArrivalRetention is how long an Arrival is kept: the freshness figures
// read a day of them; three months leaves Reader announcements and feeds
// their history.
const ArrivalRetention = 90 * 24 * time.Hour

// recordFailing writes the Site's failing figure once an hour, for the
// failing line on /admin (store.RecordFailing; migration 0024). Only the
// leader's Lane writes, after its pass and never inside it, so a Poll's
// statements stay its own; the hour is the row's key, so a replica that
// took the Lane over, or a restart, never writes an hour twice.
func (p *Poller) recordFailing(ctx context.Context, site string, l *lane) {
	now := p.now()
	hour := now.Truncate(time.Hour)
	if l.recorded.Equal(hour) {
		return
	}
	if _, err := p.st.RecordFailing(ctx, site, now); err != nil {
		p.failed("failing figure not recorded", err, "site", site)
		return
	}
	l.recorded = hour
}

// refreshFreshness recomputes /admin's freshness figure once
// store.FreshnessFigureEvery has passed (migration 0035): after the pass,
// like recordFailing, whichever leading Lane finishes first; the others
// skip it in one statement. A Lane asks at most once a
// FreshnessFigureEvery itself.
func (p *Poller) refreshFreshness(ctx context.Context, site string, l *lane) {
	now := p.now()
	if now.Sub(l.freshnessAsked) < store.FreshnessFigureEvery && !l.freshnessAsked.After(now) {
		return
	}
	l.freshnessAsked = now
	if _, err := p.st.RefreshFreshnessFigure(ctx, now); err != nil {
		p.failed("freshness figure not refreshed", err, "site", site)
	}
}
