// Package handlers is the HTTP surface: one routes.go holds the whole route
// table; handlers are maker functions that parse, call the store, build a
// view model and render a templ component.
package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"golang.org/x/oauth2"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/internal/metrics"
	"github.com/mangabookmark/mangabookmark/internal/version"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// Deps is everything the server needs, passed explicitly. NewServer starts
// nothing.
type Deps struct {
	Store  *store.Store
	Logger *slog.Logger
	Now    func() time.Time
	// Zone is the owner's time zone (TIME_ZONE): every absolute time on the
	// pages is written in it (word.When). nil is UTC.
	Zone *time.Location

	PublicBaseURL string // absolute, no trailing slash
	OwnerID       string // OWNER_DISCORD_ID (or the local owner id)

	// SessionKey derives the cookie keys (at least 32 bytes).
	SessionKey []byte
	// TokenKey keys the HMAC under which userscript tokens are stored.
	TokenKey []byte

	// PushPublicKey is the VAPID public key browsers subscribe to Web Push
	// under (kept in DATA_DIR); "" means Web Push is not set up.
	PushPublicKey string
	// PushLoopback lets a subscription name an http endpoint on loopback:
	// the tests' stand-in push service, never a server's setting.
	PushLoopback bool

	// Discord is nil when OAuth is not configured (local mode: one-time links).
	Discord *DiscordAuth

	// Notices derives the four owner-notice conditions and the state of their
	// delivery (a *notify.Notifier); nil means no condition holds.
	Notices NoticeSource

	// ReadersWebhookHash is the dead_webhooks key of READERS_WEBHOOK_URL
	// (announce.Discord.WebhookHash), "" when it is unset: the Lanes page
	// says the Readers' Discord channel is off, or dead.
	ReadersWebhookHash string

	// Reads runs Test read (a *poller.Poller): the real read path for one
	// Series now, writing nothing. nil hides the control.
	Reads TestReader

	// UserscriptVersion is the version of the userscript this server serves,
	// answered to a userscript that sends its own (X-Userscript-Version).
	// "" means the @version of the script in static/ (tests set their own).
	UserscriptVersion string

	// BrowserSites are the Sites read through the browser sidecar: the set
	// the Reader was given (word.ParseBrowserSites has already applied
	// BROWSER_SITES' default). Empty means none, as BROWSER_SITES=none does.
	BrowserSites word.BrowserSites

	// Sidecar says BROWSER_WS_URL is set. Without it the browser Sites are
	// not polled, and /admin names that as a step of setting up (issue 23,
	// item 1); the zero value is the honest default of a server not told.
	Sidecar bool

	// ListingOff is LISTING_EVERY=0: no Lane reads its Site's listing, and
	// the Lanes page says so instead of a listing state. The zero value is
	// the default, a listing read every few minutes.
	ListingOff bool
	// PollEvery and Spacing are POLL_EVERY and POLL_SPACING, as the Lanes
	// run them: the Lanes page prices a failing listing in reads by them
	// (schedule.Policy.FallbackEvery). A Site missing or zero is
	// schedule.DefaultFloor; a zero Spacing is none.
	PollEvery map[string]time.Duration
	Spacing   time.Duration

	// ReadersWebhook says READERS_WEBHOOK_URL is set: /settings offers the
	// Discord channel only then (CONTEXT.md, Reader channel).
	ReadersWebhook bool

	// Metrics counts every request by route pattern, with its duration and
	// statements, and the userscript versions the API sees; nil counts
	// nothing.
	Metrics *metrics.HTTP
	// MetricsHandler answers GET /metrics on this listener (METRICS_TOKEN
	// set and METRICS_ADDR unset; the handler checks the token); nil, and
	// /metrics is 404 like any unknown path.
	MetricsHandler http.Handler
	// Build is this binary's version: /healthz answers it as JSON and the
	// owner's footer shows it (issue 25, item 1). The zero value reads
	// version.Get.
	Build version.Info

	// Demo is the demo's webhook sink; nil unless `mangabookmark demo` runs.
	Demo DemoSink
	// RequestTimeout bounds each request's database work
	// (DATABASE_REQUEST_TIMEOUT); zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// DefaultRequestTimeout is how long a request's database work may take
// before it answers that the database is unavailable.
const DefaultRequestTimeout = 5 * time.Second

// DiscordAuth configures sign-in with Discord. Endpoint and APIBase are the
// real Discord addresses in production and a fake provider in tests.
type DiscordAuth struct {
	ClientID     string
	ClientSecret string
	GuildID      string
	Endpoint     oauth2.Endpoint
	APIBase      string // e.g. https://discord.com/api/v10
}

// DiscordEndpoint is Discord's OAuth2 endpoint.
var DiscordEndpoint = oauth2.Endpoint{
	AuthURL:   "https://discord.com/oauth2/authorize",
	TokenURL:  "https://discord.com/api/oauth2/token",
	AuthStyle: oauth2.AuthStyleInParams,
}

// DiscordAPIBase is Discord's REST API.
const DiscordAPIBase = "https://discord.com/api/v10"

func (d Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// when is a moment as every page prints it: in the owner's zone, inside a
// <time> whose datetime keeps the instant (components.Time).
func (d Deps) when(t time.Time) components.Stamp {
	return components.Stamp{ISO: word.MachineTime(t), Text: word.When(t, d.Zone)}
}

func (d Deps) build() version.Info {
	if d.Build.Version == "" {
		return version.Get()
	}
	return d.Build
}

func (d Deps) requestTimeout() time.Duration {
	if d.RequestTimeout > 0 {
		return d.RequestTimeout
	}
	return DefaultRequestTimeout
}

func (d Deps) browserSite(site string) bool { return d.BrowserSites.Has(word.Site(site)) }

// TestReader reads one Series now through the gate, its Site's route and
// its Lane's spacing, and writes nothing.
type TestReader interface {
	TestRead(ctx context.Context, site, seriesURL string) adapters.Result
}

// NoticeSource is what the admin pages read of owner notices: the same
// derivation the push uses, so the page and the message never disagree.
type NoticeSource interface {
	// QueueVerdict queues the verdict line's reads into the landing page's
	// batch; finish reads them once the batch is sent.
	QueueVerdict(b *store.Batch, now time.Time) (finish func() notify.Verdict)
	// QueueStatus queues the verdict's reads and the open notices into the
	// Lanes page's batch.
	QueueStatus(b *store.Batch, now time.Time) (finish func() (notify.Verdict, notify.Status))
}
