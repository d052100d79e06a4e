package poller

import (
	"context"
	"strings"
	"sync"
	"time"
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
// leader waits for the lock without writing pass rows, so the pass log of a
// Site reads as one Lane's history whatever the number of replicas.
func (p *Poller) runLane(ctx context.Context, site string) {
	l := p.lane(site)
	p.log().Info("lane started", "site", site)
	defer p.log().Info("lane stopped", "site", site)
	for ctx.Err() == nil {
		l.pass.Lock()
		lead, _ := p.leading(ctx, site, l) // an error is logged; retry later
		var pass Pass
		if lead {
			// Still under l.pass, so the answer holds for the whole pass.
			pass = p.safePass(ctx, site, l)
		}
		l.pass.Unlock()
		if !lead {
			p.rest(ctx, site, l, p.cfg.LeaderRetry, nil)
			continue
		}
		p.prune(ctx, site, l)
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
// lock session LISTENs, so a Forced Poll, Pause or Resume written by any
// process (this one's own admin pages included) ends the rest at once
// (ADR 0004). When that session dies (a database restart, a terminated
// backend), the Lane takes its lock and its LISTEN again at once (retake)
// instead of resting on the timer alone. A Lane that does not hold the lock
// has no session to hear a wake: it rests its LeaderRetry and asks again.
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

// The backoff between attempts to take a lost Lane lock again.
const (
	retakeFirst = 250 * time.Millisecond
	retakeMax   = 5 * time.Second
)

// retake replaces a lock whose session died: it tries the lock again with a
// backoff from retakeFirst to retakeMax until the database answers or ctx
// ends. It returns so the Lane passes at once: a Forced Poll written while
// no session listened sent its wake to nobody, and the pass is what serves
// it. If another process took the lock
// meanwhile, that pass finds out and the Lane waits as a non-leader. One log
// line when the session is lost and one when the lock is back, however long
// the database is away.
func (p *Poller) retake(ctx context.Context, site string, l *lane, cause error) {
	p.log().Warn("lane wake session lost; taking the lock again", "site", site, "err", cause)
	l.pass.Lock()
	if l.lock != nil {
		l.lock.Release()
		l.lock = nil
	}
	l.pass.Unlock()
	delay := retakeFirst
	for attempts := 1; ; attempts++ {
		l.pass.Lock()
		lock, err := p.st.TryLockLane(ctx, site)
		if err == nil {
			l.lock = lock
		}
		l.pass.Unlock()
		if err == nil {
			p.log().Info("lane lock taken again", "site", site, "attempts", attempts, "leader", lock != nil)
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

// prune deletes pass-log rows older than PassRetention days, and Arrivals
// older than ArrivalRetention, at most hourly per Lane.
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
}

// ArrivalRetention is how long an Arrival is kept: the freshness figures
// read a day of them; three months leaves Reader announcements and feeds
// their history.
const ArrivalRetention = 90 * 24 * time.Hour
