// Package notify pushes one Discord embed to the owner per episode of the
// four conditions of CONTEXT.md, Owner notice (stall, no-browser-route, sidecar-down,
// adapter-broken), and derives those conditions for the /admin verdict line
// from the same code.
//
// It fires from the pass's deferred call (Poller.Notifier), so it has no
// timer of its own: each Lane is its clock. owner_notices remembers only that
// the owner was told; inserting its row is the lock, notified_at is set only
// after Discord accepted, and the row is deleted when the condition lifts so
// the next episode sends again.
//
// notify knows nothing of sessions or OAuth: a webhook is a plain POST, and
// a test holds the package's dependency list to that.
package notify

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sync/atomic"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// Store is what notify needs from the database; *store.Store satisfies it.
type Store interface {
	StallRun(ctx context.Context, site string, now, lookbackFrom time.Time) (time.Time, bool, error)
	RefusingRun(ctx context.Context, site string, now, lookbackFrom time.Time) (time.Time, bool, error)
	SidecarDownRun(ctx context.Context, browserSites []string, now, lookbackFrom time.Time) (time.Time, bool, error)
	AdapterBroken(ctx context.Context, site string, cutoff time.Time) (time.Time, bool, error)
	OpenNotice(ctx context.Context, kind word.NoticeKind, site string) error
	CloseNotice(ctx context.Context, kind word.NoticeKind, site string, runSince time.Time) error
	ClaimNotice(ctx context.Context, kind word.NoticeKind, site, by string, at, passAt time.Time) (bool, error)
	RecordDelivery(ctx context.Context, kind word.NoticeKind, site, by string, d store.Delivery) error
	SettleStaleClaim(ctx context.Context, kind word.NoticeKind, site string, olderThan time.Time) (by string, at time.Time, ok bool, err error)
	Notices(ctx context.Context) ([]store.NoticeState, error)
	WebhookDeadAt(ctx context.Context, urlHash string) (time.Time, error)
	MarkWebhookDead(ctx context.Context, urlHash string, at time.Time) error
	NewBatch() *store.Batch
	Send(ctx context.Context, b *store.Batch) error
}

// DefaultTimeout bounds one POST to Discord when the given client has none.
const DefaultTimeout = 10 * time.Second

// MaxTimeout caps a given client's timeout, so that a send always ends well
// inside StaleClaim.
const MaxTimeout = time.Minute

// StaleClaim is how old a claim on a notice must be before another process
// settles it: far past any send's timeout, so its holder has stopped (a
// crash, a kill) between claiming and recording Discord's answer
// (docs/adr/0005).
const StaleClaim = 5 * time.Minute

// Options configures a Notifier. Only Store is required.
type Options struct {
	Store Store
	// WebhookURL is DISCORD_WEBHOOK_URL. Empty turns the push off (the
	// conditions are still derived for the verdict line).
	WebhookURL word.Secret
	// PublicBaseURL is PUBLIC_BASE_URL; the embed's title links below it.
	// Empty: the embed carries no link.
	PublicBaseURL string
	// BrowserSites are the Sites read through the sidecar.
	BrowserSites word.BrowserSites
	// HTTPClient posts to Discord; nil gets one with DefaultTimeout. It is
	// copied, given a timeout if it has none, and never follows redirects.
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Window is ownerWindow; zero means OwnerWindow.
	Window time.Duration
	// Lookback bounds pass-log scans; zero means DefaultLookback.
	Lookback time.Duration
	// Now is the wall clock claims are stamped and judged by; nil means
	// time.Now. (The conditions' clock is the pass time.)
	Now func() time.Time
}

// Notifier derives the four conditions and pushes their notices.
type Notifier struct {
	store Store
	// hook is nil when the push is off. It is a pointer so that even %#v
	// of a Notifier prints an address rather than the secret.
	hook        *webhook
	base        *url.URL
	browser     word.BrowserSites
	browserList []string
	client      *http.Client
	log         *slog.Logger
	window      time.Duration
	lookback    time.Duration
	now         func() time.Time
	// claimer names this process in its claims; each claim adds a serial.
	claimer string
	claims  atomic.Uint64

	deadLogged atomic.Bool
}

type webhook struct {
	url  word.Secret
	hash string // hex SHA-256 of url: the dead_webhooks key
}

// New validates opts and builds a Notifier. With no WebhookURL it logs once
// that owner notices are off, and Hook returns nil.
func New(opts Options) (*Notifier, error) {
	if opts.Store == nil {
		return nil, errors.New("notify: no store")
	}
	n := &Notifier{
		store:    opts.Store,
		log:      opts.Logger,
		window:   opts.Window,
		lookback: opts.Lookback,
		now:      opts.Now,
		claimer:  processName(),
	}
	if n.now == nil {
		n.now = time.Now
	}
	if n.log == nil {
		n.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if n.window <= 0 {
		n.window = word.OwnerWindow
	}
	if n.lookback <= 0 {
		n.lookback = DefaultLookback
	}
	if n.lookback <= n.window {
		return nil, errors.New("notify: lookback must exceed the window")
	}
	var err error
	if n.browser, n.browserList, err = browserSites(opts.BrowserSites); err != nil {
		return nil, err
	}
	if opts.PublicBaseURL != "" {
		u, err := url.Parse(opts.PublicBaseURL)
		if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, errors.New("notify: PUBLIC_BASE_URL must be an absolute http(s) address")
		}
		n.base = u
	}
	if opts.WebhookURL == "" {
		n.log.Info("owner notices off: DISCORD_WEBHOOK_URL is unset")
		return n, nil
	}
	if err := ValidateWebhookURL(opts.WebhookURL); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(opts.WebhookURL.Reveal()))
	n.hook = &webhook{url: opts.WebhookURL, hash: hex.EncodeToString(sum[:])}
	n.client = webhookClient(opts.HTTPClient)
	n.log.Info("owner notices on: Discord webhook configured")
	return n, nil
}

// browserSites are the Sites read over the browser route (sidecar-down's
// Lanes), as a set and as a sorted list.
func browserSites(on word.BrowserSites) (word.BrowserSites, []string, error) {
	list := on.Names()
	set := word.BrowserSites{}
	for _, site := range list {
		if !word.KnownSite(site) {
			return nil, nil, fmt.Errorf("notify: unknown browser site %q", site)
		}
		set[word.Site(site)] = true
	}
	return set, list, nil
}

// webhookClient is the client the embeds are posted with: the caller's, or
// one with DefaultTimeout, never waiting past MaxTimeout and never following
// a redirect (a webhook that redirects is not Discord's).
func webhookClient(given *http.Client) *http.Client {
	c := http.Client{Timeout: DefaultTimeout}
	if given != nil {
		c = *given
		if c.Timeout <= 0 {
			c.Timeout = DefaultTimeout
		}
		c.Timeout = min(c.Timeout, MaxTimeout)
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// WebhookHash is the hex SHA-256 of the configured webhook's address (the
// dead_webhooks key), "" when none is configured. Never the address.
func (n *Notifier) WebhookHash() string {
	if !n.Enabled() {
		return ""
	}
	return n.hook.hash
}

// Enabled reports whether notices are pushed (a webhook is configured).
func (n *Notifier) Enabled() bool { return n != nil && n.hook != nil }

// Hook is the value for Poller.Notifier: nil when the push is off, so the
// poller's "nil means off" holds.
func (n *Notifier) Hook() func(ctx context.Context, site string, passAt time.Time) error {
	if !n.Enabled() {
		return nil
	}
	return n.Check
}

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
	var errs []error
	for _, s := range n.subjectsFor(site) {
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
	switch res.verdict {
	case delivered:
		n.log.Info("owner notice sent", "kind", string(c.Kind), "site", c.Site)
		return store.Delivery{SentAt: at}, false
	case deadWebhook:
		n.logDead()
		return store.Delivery{AttemptAt: at, Err: deadReason}, true
	case retryNextPass:
		d := store.Delivery{AttemptAt: at, Err: res.reason}
		if res.retryAfter > 0 {
			d.RetryNotBefore = passAt.Add(res.retryAfter)
		}
		n.log.Warn("owner notice not sent; retrying on a later pass",
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

// processName names this process in its claims: host and pid, and a random
// part so a restarted process with the same pid is another claimer.
func processName() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))
}

// rejectedRetry is how long a message Discord refused (a 4xx other than 404
// and 429) waits before it is tried again: a Lane's default rest.
const rejectedRetry = time.Hour

// logDead says once per process that the webhook is dead.
func (n *Notifier) logDead() {
	if n.deadLogged.CompareAndSwap(false, true) {
		n.log.Error("owner notices stopped: " + deadReason)
	}
}

// Notice is one open owner notice as the notices command and the Lanes page
// show it.
type Notice struct {
	Kind word.NoticeKind
	Site string
	// Holds is false when the condition no longer derives: the notice closes
	// on the responsible Lane's next pass.
	Holds bool
	Since time.Time // when the condition began (zero unless Holds)
	// SentAt is when Discord accepted the message; zero while pending.
	SentAt         time.Time
	Attempts       int
	LastAttemptAt  time.Time
	LastError      string // free of the webhook address
	RetryNotBefore time.Time
	// GaveUp: Discord refused the message itself (a 4xx other than 404 and
	// 429); it is tried again from RetryNotBefore, an hour on.
	GaveUp bool
}

// Pending reports whether the owner has not been told yet.
func (nt Notice) Pending() bool { return nt.SentAt.IsZero() }

// Status is the whole state of the push, for the notices command and /admin.
type Status struct {
	Enabled bool
	// WebhookDeadAt is when Discord answered 404 for the configured webhook;
	// zero while it is alive (or none is configured).
	WebhookDeadAt time.Time
	Notices       []Notice
}

// WebhookDeadAt is when Discord answered 404 ("Unknown Webhook") for the
// configured webhook; zero while it works or when none is configured. One
// primary-key read: the landing page asks it on every load.
func (n *Notifier) WebhookDeadAt(ctx context.Context) (time.Time, error) {
	if !n.Enabled() {
		return time.Time{}, nil
	}
	at, err := n.store.WebhookDeadAt(ctx, n.hook.hash)
	if err != nil {
		return time.Time{}, fmt.Errorf("notify: webhook state: %w", err)
	}
	return at, nil
}

// Status reads the open notices, each with the age its condition has at now,
// in one round trip (QueueStatus).
func (n *Notifier) Status(ctx context.Context, now time.Time) (Status, error) {
	b := n.store.NewBatch()
	finish := n.QueueStatus(b, now)
	if err := n.store.Send(ctx, b); err != nil {
		return Status{}, fmt.Errorf("notify: status: %w", err)
	}
	_, st := finish()
	return st, nil
}

// QueueStatus queues Status's reads into b — the verdict's (the conditions'
// one statement, the webhook's state) and the open notices — so a page
// sends them with its own reads in one round trip. finish reads both once b
// is sent. A notice holds exactly when its condition is in the verdict:
// holding reads the very expressions derive runs one subject at a time.
func (n *Notifier) QueueStatus(b *store.Batch, now time.Time) (finish func() (Verdict, Status)) {
	verdict := n.QueueVerdict(b, now)
	var rows []store.NoticeState
	b.Notices(&rows)
	return func() (Verdict, Status) {
		v := verdict()
		out := Status{Enabled: n.Enabled(), WebhookDeadAt: v.WebhookDeadAt}
		held := map[subject]Condition{}
		for _, c := range v.Conditions {
			held[subject{c.Kind, c.Site}] = c
		}
		for _, r := range rows {
			nt := Notice{
				Kind:      r.Kind,
				Site:      r.Site,
				Attempts:  r.Attempts,
				LastError: r.LastError,
				GaveUp:    r.GaveUp,
			}
			nt.SentAt, nt.LastAttemptAt, nt.RetryNotBefore = r.NotifiedAt, r.LastAttemptAt, r.RetryNotBefore
			if c, ok := held[subject{nt.Kind, nt.Site}]; ok {
				nt.Holds, nt.Since = true, c.Since
			}
			out.Notices = append(out.Notices, nt)
		}
		return v, out
	}
}
