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

	"github.com/mangabookmark/mangabookmark/internal/repeat"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// Store is what notify needs from the database; *store.Store satisfies it.
type Store interface {
	StallRun(ctx context.Context, site string, now, lookbackFrom time.Time) (time.Time, bool, error)
	UnledLanes(ctx context.Context, d time.Duration) ([]string, error)
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
	// Observer is told what each POST to Discord came to, for the metrics
	// (issue 25, item 5); nil tells no one.
	Observer Observer
}

// Observer is told the result of each owner notice sent to Discord.
type Observer interface {
	NoticeSent(word.SendResult)
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
	observer   Observer
	// repeated keeps a notice that fails on every pass to a line a minute.
	repeated *repeat.Log
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
		observer: opts.Observer,
	}
	if n.now == nil {
		n.now = time.Now
	}
	if n.log == nil {
		n.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	n.repeated = repeat.New(n.log, n.now)
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

// processName names this process in its claims: host and pid, and a random
// part so a restarted process with the same pid is another claimer.
func processName() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))
}
