package poller

import (
	"context"
	"sync"
	"time"
)

// Run starts one Lane per Site and blocks until ctx is cancelled and every
// Lane has finished its current Poll and recorded its pass. It then
// releases the Lane locks, so a replica can take over at once.
func (p *Poller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, site := range p.Sites {
		wg.Go(func() { p.runLane(ctx, site) })
	}
	wg.Wait()
	p.Close()
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
			p.rest(ctx, l, or(p.LeaderRetry, DefaultLeaderRetry))
			continue
		}
		p.prune(ctx, site, l)
		p.rest(ctx, l, pass.Rest)
	}
}

// safePass runs a pass of a Lane this process leads (the caller holds
// l.pass); a panic outside any one Poll (the pass's own code) is logged and
// the Lane rests its error rest and goes on.
func (p *Poller) safePass(ctx context.Context, site string, l *lane) (pass Pass) {
	defer func() {
		if r := recover(); r != nil {
			p.log().Error("pass panicked", "site", site, "panic", r)
			pass = Pass{Site: site, Rest: or(p.ErrorRest, DefaultErrorRest)}
		}
	}()
	return p.runPass(ctx, site, l, true)
}

// rest waits d (at most DefaultRest), or until the Lane is woken, or ctx
// ends. A wake comes in-process (the channel) or through the database: the
// leader's lock session LISTENs, so a Forced Poll written by any process,
// through poller or store, ends the rest at once.
func (p *Poller) rest(ctx context.Context, l *lane, d time.Duration) {
	wctx, cancel := context.WithTimeout(ctx, p.clampRest(d))
	defer cancel()
	l.pass.Lock()
	lock := l.lock
	l.pass.Unlock()
	if lock != nil {
		woke := make(chan error, 1)
		go func() { woke <- lock.WaitWake(wctx) }()
		select {
		case err := <-woke:
			if err == nil || wctx.Err() != nil {
				return
			}
			// The session failed: the next pass finds out and steps down.
			// Until then, rest on the timer alone.
		case <-l.wake:
			cancel()
			<-woke
			return
		}
	}
	select {
	case <-wctx.Done():
	case <-l.wake:
	}
}

// prune deletes pass-log rows older than PassRetention days, at most hourly
// per Lane.
func (p *Poller) prune(ctx context.Context, site string, l *lane) {
	now := p.now()
	if !l.lastPrune.IsZero() && now.Sub(l.lastPrune) < time.Hour {
		return
	}
	l.lastPrune = now
	days := or(p.PassRetention, DefaultPassRetention)
	before := now.Add(-time.Duration(days) * 24 * time.Hour)
	n, err := p.Store.PrunePasses(ctx, site, before)
	if err != nil {
		p.log().Error("pass log not pruned", "site", site, "err", err)
		return
	}
	if n > 0 {
		p.log().Info("pass log pruned", "site", site, "rows", n)
	}
}
