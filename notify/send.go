package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// Check runs after a pass of site's Lane wrote its pass-log row. For each
// condition that pass is responsible for it opens the notice and sends it
// once, or closes the notice when the condition no longer holds. passAt is
// the clock: the conditions' now, the embed's timestamp, the sent time.
//
// A send that fails is logged and left for the next pass; Check returns an
// error only when the database fails.
func (n *Notifier) Check(ctx context.Context, site string, passAt time.Time) error {
	if !n.Enabled() {
		return nil
	}
	if !word.KnownSite(site) {
		return fmt.Errorf("notify: unknown site %q", site)
	}
	// One read of the open notices (at most 19 rows) decides which subjects
	// need a statement at all: on the healthy path none is open and a pass
	// writes nothing here, and a notice already sent stays quiet without a
	// claim. A notice another process opens after this read is seen by the
	// next pass; the claim below is still what keeps a message from going
	// twice.
	rows, err := n.store.Notices(ctx)
	if err != nil {
		return fmt.Errorf("notify: check %s: %w", site, err)
	}
	open := make(map[subject]store.NoticeState, len(rows))
	for _, r := range rows {
		open[subject{r.Kind, r.Site}] = r
	}
	subjects, err := n.withUnled(ctx, site)
	if err != nil {
		return fmt.Errorf("notify: check %s: %w", site, err)
	}
	var errs []error
	for _, s := range subjects {
		c, holds, err := n.derive(ctx, s, passAt)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		st, isOpen := open[s]
		if !holds {
			if !isOpen {
				continue
			}
			// c.Since is set when the condition's run is still going but not
			// yet past the window at this pass's start: another Lane, or a
			// replica whose clock reads later, may already have sent it, and
			// that message stands for this run. Only a notice sent before the
			// run began (an earlier episode nothing closed) goes.
			errs = append(errs, n.store.CloseNotice(ctx, s.kind, s.site, c.Since))
			continue
		}
		if isOpen && !st.NotifiedAt.IsZero() {
			continue // told already: the episode stays quiet
		}
		if !isOpen {
			if err := n.store.OpenNotice(ctx, s.kind, s.site); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		errs = append(errs, n.tell(ctx, st, c, passAt))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("notify: check %s: %w", site, err)
	}
	return nil
}

// deadReason is the pending reason every notice carries while the webhook
// is dead.
const deadReason = "webhook is dead (Discord answered 404 Unknown Webhook); change DISCORD_WEBHOOK_URL"

// tell sends the notice for c unless it must wait: claimed by a live
// process, waiting for its retry time, or the webhook dead. The claim is
// committed before the POST and let go with Discord's answer after it, so no
// database connection or lock is held while the webhook is asked
// (docs/adr/0005). st is the notice's state as Check read it (zero when
// Check opened it).
func (n *Notifier) tell(ctx context.Context, st store.NoticeState, c Condition, passAt time.Time) error {
	kind, site := c.Kind, c.Site
	if !st.ClaimedAt.IsZero() {
		return n.settle(ctx, kind, site)
	}
	if st.RetryNotBefore.After(passAt) {
		return nil // a 429's retry_after, or a refusal's hour, has not passed
	}
	deadAt, err := n.store.WebhookDeadAt(ctx, n.hook.hash)
	if err != nil {
		return err
	}
	if !deadAt.IsZero() {
		n.logDead()
		if st.LastError == deadReason {
			return nil
		}
	}
	by := fmt.Sprintf("%s#%d", n.claimer, n.claims.Add(1))
	claimed, err := n.store.ClaimNotice(ctx, kind, site, by, n.now(), passAt)
	if err != nil || !claimed {
		return err // claimed elsewhere, sent meanwhile, or closed
	}
	var d store.Delivery
	died := false
	if !deadAt.IsZero() {
		d = store.Delivery{AttemptAt: passAt, Err: deadReason}
	} else {
		d, died = n.deliver(ctx, c, passAt)
	}
	// The answer is recorded even when the pass's context has ended: the
	// message may have gone, and a claim left behind would read as a crash.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	errs := []error{n.store.RecordDelivery(wctx, kind, site, by, d)}
	if died {
		errs = append(errs, n.store.MarkWebhookDead(wctx, n.hook.hash, d.AttemptAt))
	}
	return errors.Join(errs...)
}

// settle ends a claim older than StaleClaim: its holder stopped between
// claiming and recording, so the notice counts as sent (it may have gone).
// A younger claim is another process sending right now; this one stays
// quiet.
func (n *Notifier) settle(ctx context.Context, kind word.NoticeKind, site string) error {
	by, at, ok, err := n.store.SettleStaleClaim(ctx, kind, site, n.now().Add(-StaleClaim))
	if err != nil || !ok {
		return err
	}
	n.log.Warn("owner notice counted as sent: the process that claimed it stopped before recording Discord's answer",
		"kind", string(kind), "site", site, "claimed_by", by, "claimed_at", at.Format(time.RFC3339))
	return nil
}

// deliver sends one claimed message and says what to record. died reports a
// 404 from Discord: the caller records the dead webhook too.
func (n *Notifier) deliver(ctx context.Context, c Condition, passAt time.Time) (d store.Delivery, died bool) {
	at := passAt
	res := n.send(ctx, c, passAt)
	if n.observer != nil {
		n.observer.NoticeSent(res.result())
	}
	switch res.verdict {
	case delivered:
		n.repeated.Clear(string(c.Kind)+"/"+c.Site, notSent, "kind", string(c.Kind), "site", c.Site)
		n.log.Info("owner notice sent", "kind", string(c.Kind), "site", c.Site)
		return store.Delivery{SentAt: at}, false
	case deadWebhook:
		n.logDead()
		return store.Delivery{AttemptAt: at, Err: deadReason}, true
	case unanswered:
		n.log.Warn("owner notice sent but Discord never answered; counted as sent, it may not have arrived",
			"kind", string(c.Kind), "site", c.Site, "error", res.reason)
		return store.Delivery{SentAt: at, Unknown: true, Err: res.reason}, false
	case retryNextPass:
		d := store.Delivery{AttemptAt: at, Err: res.reason}
		if res.retryAfter > 0 {
			d.RetryNotBefore = passAt.Add(res.retryAfter)
		}
		n.repeated.Fail(slog.LevelWarn, string(c.Kind)+"/"+c.Site, notSent,
			"kind", string(c.Kind), "site", c.Site, "status", res.status, "error", res.reason)
		return d, false
	default: // rejected
		// The same message to the same address will be refused again, so
		// not on every pass; but what fixes it (a new DISCORD_WEBHOOK_URL, a
		// deploy) happens during the episode, and the next pass after that
		// must send. Tried again no sooner than an hour.
		n.log.Error("owner notice refused by Discord; trying again in an hour",
			"kind", string(c.Kind), "site", c.Site, "status", res.status, "error", res.reason)
		return store.Delivery{AttemptAt: at, Err: res.reason, GiveUp: true,
			RetryNotBefore: passAt.Add(rejectedRetry)}, false
	}
}

// notSent is logged when a send failed and waits for a later pass: on every
// pass while Discord fails, so through repeat.Log.
const notSent = "owner notice not sent; retrying on a later pass"

// rejectedRetry is how long a message Discord refused (a 4xx other than 404
// and 429) waits before it is tried again: a Lane's default rest.
const rejectedRetry = time.Hour

// logDead says once per process that the webhook is dead.
func (n *Notifier) logDead() {
	if n.deadLogged.CompareAndSwap(false, true) {
		n.log.Error("owner notices stopped: " + deadReason)
	}
}

// withUnled is what a pass of site evaluates (subjectsFor), and the stall of
// every other Lane nobody has led for the window: such a Lane
// writes no pass, so no pass of its own would ever tell its stall (ADR
// 0018). Once a process leads it again, its own passes close the notice.
func (n *Notifier) withUnled(ctx context.Context, site string) ([]subject, error) {
	out := n.subjectsFor(site)
	unled, err := n.store.UnledLanes(ctx, n.window)
	if err != nil {
		return nil, err
	}
	for _, u := range unled {
		if u != site && word.KnownSite(u) {
			out = append(out, subject{word.Stall, u})
		}
	}
	return out, nil
}
