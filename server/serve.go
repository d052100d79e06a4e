package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mangabookmark/mangabookmark/announce"
	"github.com/mangabookmark/mangabookmark/fetch"
	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/internal/metrics"
	"github.com/mangabookmark/mangabookmark/internal/version"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// NewLogger is the server's log: text lines on w from level up. The
// commands that run beside the server (testdb, the demo) log the same way.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// Run is `mangabookmark serve`: the configuration read once from getenv,
// then the server until ctx ends. Everything it reads or writes comes in as
// an argument, so a test runs the whole server with a fake getenv and its
// own writers.
func Run(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return err
	}
	return Serve(ctx, cfg, stdout, stderr, Options{})
}

// Options are what `demo` changes about a server; the zero value is
// the server `serve` runs.
type Options struct {
	// Now is the clock of the Lanes, the owner notices and the pages; nil
	// is time.Now.
	Now func() time.Time
	// Pace, when set, is every Site's poll pace and a Lane's longest rest.
	Pace time.Duration
	// Demo is the demo's webhook sink, shown on a page of its own.
	Demo handlers.DemoSink
	// Ready is called once the server listens, with its store.
	Ready func(st *store.Store)
	// OwnLinks: the caller prints its own sign-in links (the demo).
	OwnLinks bool
	// Listener, when set, is LISTEN_ADDR already taken (Listen): the demo
	// takes it before it wipes or starts anything, so a second demo on a
	// busy address stops before it touches the first one's (issue 23,
	// item 9).
	Listener net.Listener
	// Registry, when set, is the registry every metric goes on
	// (internal/metrics, issue 25, item 5): the requests and pools, and the
	// domain metrics — what the Lanes, the owner notices and the Reader
	// announcements do, and the pages' figures read at scrape time. A test
	// reads it directly; nil is metrics off unless METRICS_TOKEN or
	// METRICS_ADDR is set, and then Serve makes one (newMetrics).
	Registry *prometheus.Registry

	// domain is Registry's domain metrics, made by Serve; nil when off.
	domain *metrics.Domain
}

// Listen takes LISTEN_ADDR. A busy address is one sentence naming it and
// what to do, as `make run` or `make demo` beside another server is the
// usual cause.
func Listen(addr string) (net.Listener, error) { return listenAs("LISTEN_ADDR", addr) }

// listenAs takes the address of the setting name (LISTEN_ADDR, METRICS_ADDR).
func listenAs(name, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("%s: cannot listen on %s: another program, perhaps another mangabookmark server or demo, listens there; stop it or set %s to a free address", name, addr, name)
	case err != nil:
		return nil, fmt.Errorf("%s: cannot listen on %s: %w", name, addr, err)
	}
	return ln, nil
}

// lanesConfig is how the server's Lanes run: every Site at POLL_SPACING,
// each at its POLL_EVERY pace, covers fetched through reader while each Lane rests, owner notices after
// every pass; the demo's pace shortens every Site's pace and rests.
func lanesConfig(cfg Config, o Options, log *slog.Logger, reader *fetch.Reader, notifier *notify.Notifier, announcer *announce.Announcer) poller.Config {
	c := poller.Config{
		Spacing:      cfg.PollSpacing,
		ListingEvery: cfg.ListingEvery,
		Backstop:     cfg.PollBackstop,
		PollEvery:    cfg.PollEvery,
		Now:          o.Now,
		// An orphan older than ORPHAN_RETENTION goes at a Lane's prune
		// (ADR 0024).
		OrphanRetention: cfg.OrphanRetention,
		Logger:          log,
		Covers:          reader,
		// The owner's notices first, as before; then the Readers'
		// announcements (ADR 0017), each run even when the other fails.
		Notifier: announce.Chain(notifier.Hook(), announcer.Hook()),
	}
	if o.domain != nil {
		c.Observer = o.domain
	}
	if o.Pace > 0 {
		c.PollEvery = pollEvery(cfg, o)
		c.DefaultRest, c.MinRest, c.BrowserDownFor = o.Pace, o.Pace, o.Pace
	}
	return c
}

// pollEvery is each Site's pace as its Lane runs it: POLL_EVERY, or the
// demo's pace for every Site.
func pollEvery(cfg Config, o Options) map[string]time.Duration {
	if o.Pace <= 0 {
		return cfg.PollEvery
	}
	every := map[string]time.Duration{}
	for _, site := range word.SiteNames() {
		every[site] = o.Pace
	}
	return every
}

// Serve runs the server with cfg until ctx ends, and owns the shutdown
// order, the reverse of the start: stop accepting, finish requests, stop
// serving /metrics, stop the Lanes (they release their Lane locks), close
// the pool, stop the local cluster.
//
// LISTEN_ADDR (and METRICS_ADDR) is taken first: a server that cannot
// listen must not start the cluster nor rewrite the start-up record the
// notices command reads (OwnerNotices), which would then describe a server
// that never served (issue 22, item 10).
func Serve(ctx context.Context, cfg Config, stdout, stderr io.Writer, o Options) error {
	if o.Now == nil {
		o.Now = time.Now
	}
	log := cfg.logger(stderr)
	// The first line says which build this is, so a log pasted into a bug
	// report names it (issue 25, item 1).
	build := version.Get()
	log.Info("mangabookmark starting", "version", build.Version, "commit", build.Commit, "built", build.Date, "go", build.GoVersion)
	ln, mln, err := listen(cfg, o)
	if err != nil {
		return err
	}
	defer ln.Close() // on an early return; after Serve, srv.Shutdown has closed it
	if mln != nil {
		defer mln.Close()
	}
	st, stopDB, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stopDB()
	p, err := wire(ctx, cfg, &o, st, log)
	if err != nil {
		return err
	}
	lanes := poller.New(st.Lanes(), p.reader, p.lanes)
	p.pages.Reads = lanes // Test read: the Lanes' own read path and spacing
	stopLanes := runLanes(ctx, lanes, log)
	defer stopLanes()
	stopMetrics := serveMetrics(ctx, mln, cfg, o.Registry, log)
	defer stopMetrics()
	return serveHTTP(ctx, ln, cfg, o, st, p.pages, stdout, log)
}

// openStore is the server's database, migrated, through its two pools
// (DATABASE_POOL_SIZE, DATABASE_LANE_POOL_SIZE); stop closes the pools,
// then stops what OpenMigrated started.
func openStore(ctx context.Context, cfg Config, log *slog.Logger) (st *store.Store, stop func(), err error) {
	dbURL, stopDB, err := OpenMigrated(ctx, cfg, log, "serve")
	if err != nil {
		return nil, nil, err
	}
	st, err = store.Open(ctx, dbURL, store.Pools{Pages: cfg.PoolSize, Lanes: cfg.LanePoolSize})
	if err != nil {
		stopDB()
		return nil, nil, DatabaseError(cfg, err)
	}
	return st, func() { st.Close(); stopDB() }, nil
}

// parts are the server's parts as the settings make them, built and not
// yet started: the pages' Deps, and the Lanes' Config with the Reader they
// read through. Each setting reaches the part that uses it here, or in
// Config.logger, listen or openStore before
// (TestEverySettingReachesThePartThatUsesIt).
type parts struct {
	pages         handlers.Deps
	readerOptions fetch.ReaderOptions
	reader        *fetch.Reader
	lanes         poller.Config
}

// wire builds the parts on st: the metrics when asked for (into o), the
// pages' Deps, the owner notices, the Web Push keys, the Readers'
// announcements, the Reader and the Lanes' Config.
func wire(ctx context.Context, cfg Config, o *Options, st *store.Store, log *slog.Logger) (parts, error) {
	if err := o.metricsOn(cfg, st, log); err != nil {
		return parts{}, err
	}
	deps, err := handlerDeps(cfg, *o, st, log)
	if err != nil {
		return parts{}, err
	}
	newMetrics(cfg, o.Registry, st, &deps)
	notifier, err := OwnerNotices(ctx, cfg, *o, st, log, &deps)
	if err != nil {
		return parts{}, err
	}
	// The Web Push keys are read (or made) once: the pages show the public
	// key, the Announcer's push Sender signs with the pair.
	vapid, err := VAPIDKeysFor(cfg.DataDir)
	if err != nil {
		return parts{}, fmt.Errorf("web push keys: %w", err)
	}
	deps.PushPublicKey = vapid.Public
	announcer, err := ReaderAnnouncements(cfg, *o, st, log, &deps, vapid)
	if err != nil {
		return parts{}, err
	}
	p := parts{pages: deps, readerOptions: readerOptions(cfg, log)}
	p.reader = fetch.NewReader(p.readerOptions)
	p.lanes = lanesConfig(cfg, *o, log, p.reader, notifier, announcer)
	return p, nil
}

// readerOptions is how the Reader fetches: SITE_BASE_URLS' rewrites, and
// BROWSER_SITES through the sidecar at BROWSER_WS_URL.
func readerOptions(cfg Config, log *slog.Logger) fetch.ReaderOptions {
	return fetch.ReaderOptions{
		BaseURLs:     cfg.SiteBases,
		BrowserSites: cfg.BrowserSites,
		BrowserWSURL: cfg.BrowserWSURL,
		Logger:       log,
	}
}

// metricsOn makes the registry when METRICS_TOKEN or METRICS_ADDR asks for
// one (a test may bring its own), and the domain metrics on it (ADR 0028):
// the gauges read through the pages' pool, as the pages they mirror do; the
// counters are told by the Lanes. A nil Registry is metrics off.
func (o *Options) metricsOn(cfg Config, st *store.Store, log *slog.Logger) error {
	if o.Registry == nil && cfg.MetricsOn() {
		o.Registry = metrics.NewRegistry()
	}
	if o.Registry == nil {
		return nil
	}
	var err error
	if o.domain, err = metrics.NewDomain(o.Registry, st, metrics.DomainOptions{Now: o.Now, Logger: log}); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// listen takes LISTEN_ADDR, unless the caller took it (Options.Listener),
// and METRICS_ADDR when it is set (mln nil otherwise).
func listen(cfg Config, o Options) (ln, mln net.Listener, err error) {
	if ln = o.Listener; ln == nil {
		if ln, err = Listen(cfg.ListenAddr); err != nil {
			return nil, nil, err
		}
	}
	if mln, err = listenMetrics(cfg); err != nil {
		ln.Close()
		return nil, nil, err
	}
	return ln, mln, nil
}

// handlerDeps is what the pages need from the configuration: the keys
// (generated into DATA_DIR when unset), the routes, Discord sign-in.
func handlerDeps(cfg Config, o Options, st *store.Store, log *slog.Logger) (handlers.Deps, error) {
	sessionKey, err := KeyFor(cfg.SessionKey, cfg.DataDir, "session.key")
	if err != nil {
		return handlers.Deps{}, fmt.Errorf("SESSION_KEY: %w", err)
	}
	tokenKey, err := KeyFor(cfg.TokenKey, cfg.DataDir, "token.key")
	if err != nil {
		return handlers.Deps{}, fmt.Errorf("TOKEN_KEY: %w", err)
	}
	deps := handlers.Deps{
		Store:         st,
		Logger:        log,
		Now:           o.Now,
		Zone:          cfg.TimeZone,
		Demo:          o.Demo,
		Build:         version.Get(),
		PublicBaseURL: cfg.PublicBaseURL,
		OwnerID:       cfg.OwnerDiscordID,
		SessionKey:    sessionKey,
		TokenKey:      tokenKey,
		// The Lanes page names each Site's route (plain or browser): the set
		// the Reader was given, BROWSER_SITES=none (the demo's setting) being
		// the empty set.
		BrowserSites:   cfg.BrowserSites,
		RequestTimeout: cfg.RequestTimeout,
		// /admin says when browser Sites have no sidecar to be read through.
		Sidecar: cfg.BrowserWSURL != "",
		// LISTING_EVERY=0: the Lanes page says "listing off".
		ListingOff: cfg.ListingEvery == 0,
		// The Lanes page prices a failing listing in the Lanes' own reads.
		PollEvery: pollEvery(cfg, o),
		Spacing:   cfg.PollSpacing,
		// /settings offers the Discord channel only when it exists.
		ReadersWebhook: cfg.ReadersWebhookURL.Set(),
	}
	if cfg.OAuth() {
		deps.Discord = &handlers.DiscordAuth{
			ClientID:     cfg.DiscordClientID,
			ClientSecret: cfg.DiscordClientSecret.Reveal(),
			GuildID:      cfg.DiscordGuildID,
			Endpoint:     handlers.DiscordEndpoint,
			APIBase:      handlers.DiscordAPIBase,
		}
	}
	if cfg.BrowserWSURL == "" && len(deps.BrowserSites.Names()) > 0 {
		log.Info("no browser sidecar: BROWSER_WS_URL is not set; browser Sites are not polled", "browser_sites", strings.Join(deps.BrowserSites.Names(), ","))
	}
	return deps, nil
}

// OwnerNotices builds the Lanes' notifier (answered) and the pages' (into
// deps), and records the webhook state for the notices command. Serve calls
// it at start; the notices command's tests call it to record a server's
// settings exactly as Serve does.
func OwnerNotices(ctx context.Context, cfg Config, o Options, st *store.Store, log *slog.Logger, deps *handlers.Deps) (*notify.Notifier, error) {
	notices := noticesOptions(cfg, o, st, log)
	notifier, err := notify.New(notices)
	if err != nil {
		// LoadConfig has already refused a bad DISCORD_WEBHOOK_URL with
		// notify's own check; what is left here is not about the address.
		return nil, fmt.Errorf("owner notices: %w", err)
	}
	notices.Store, notices.Logger, notices.Observer = st, nil, nil // nil: its "notices on" line is said once, above
	if deps.Notices, err = notify.New(notices); err != nil {
		return nil, fmt.Errorf("owner notices: %w", err)
	}
	// The notices and link commands report this, not their own
	// environment's settings; notices reads its ages on this server's clock
	// (the demo's runs ahead) and prints moments in its zone.
	wall, ahead := time.Now(), time.Duration(0)
	if o.Now != nil {
		ahead = o.Now().Sub(wall).Round(time.Millisecond)
	}
	if err := st.RecordServerWebhook(ctx, store.ServerWebhook{Configured: notifier.Enabled(), Hash: notifier.WebhookHash(),
		RecordedAt: wall, BrowserSites: deps.BrowserSites.Names(), PublicBaseURL: cfg.PublicBaseURL,
		ClockAhead: ahead, TimeZone: zoneName(cfg.TimeZone)}); err != nil && ctx.Err() == nil {
		log.Error("owner notices: the webhook state could not be recorded for the notices command", "err", err)
	}
	return notifier, nil
}

// noticesOptions is the Lanes' notifier: DISCORD_WEBHOOK_URL, the embed's
// links below PUBLIC_BASE_URL, BROWSER_SITES for the sidecar's conditions.
// It sends through the Lanes' pool; the pages read the same conditions
// through theirs (store.Pools).
func noticesOptions(cfg Config, o Options, st *store.Store, log *slog.Logger) notify.Options {
	notices := notify.Options{
		Store:         st.Lanes(),
		WebhookURL:    cfg.DiscordWebhookURL,
		PublicBaseURL: cfg.PublicBaseURL,
		BrowserSites:  cfg.BrowserSites,
		Logger:        log,
		Now:           o.Now,
	}
	if o.domain != nil {
		notices.Observer = o.domain // the Lanes' notifier is the one that sends
	}
	return notices
}

// ReaderAnnouncements builds the Lanes' Announcer: the Discord channel when
// READERS_WEBHOOK_URL is set (its dead_webhooks key goes into deps, for the
// Lanes page), and Web Push signing with keys (kept in DATA_DIR).
func ReaderAnnouncements(cfg Config, o Options, st *store.Store, log *slog.Logger, deps *handlers.Deps, keys announce.VAPIDKeys) (*announce.Announcer, error) {
	discord, err := announce.NewDiscord(cfg.ReadersWebhookURL, nil)
	if err != nil {
		return nil, fmt.Errorf("reader announcements: %w", err)
	}
	var senders []announce.Sender
	if discord != nil {
		senders = append(senders, discord)
		deps.ReadersWebhookHash = discord.WebhookHash()
		log.Info("reader announcements: Discord channel on")
	}
	push, err := PushSender(cfg, st.Lanes(), keys, log)
	if err != nil {
		return nil, fmt.Errorf("reader announcements: %w", err)
	}
	senders = append(senders, push)
	ao := announceOptions(cfg, o, st, log)
	ao.Senders = senders
	a, err := announce.New(ao)
	if err != nil {
		return nil, fmt.Errorf("reader announcements: %w", err)
	}
	return a, nil
}

// announceOptions is the Announcer's links, absolute below PUBLIC_BASE_URL;
// its Senders are ReaderAnnouncements'.
func announceOptions(cfg Config, o Options, st *store.Store, log *slog.Logger) announce.Options {
	ao := announce.Options{Store: st.Lanes(), PublicBaseURL: cfg.PublicBaseURL, Logger: log, Now: o.Now}
	if o.domain != nil {
		ao.Observer = o.domain
	}
	return ao
}

// runLanes runs the Lanes until stop, which waits for Run to release the
// Lane locks on its way out.
func runLanes(ctx context.Context, lanes *poller.Poller, log *slog.Logger) (stop func()) {
	lanesCtx, stopLanes := context.WithCancel(context.WithoutCancel(ctx))
	lanesDone := make(chan struct{})
	go func() {
		defer close(lanesDone)
		lanes.Run(lanesCtx)
	}()
	return func() {
		stopLanes()
		<-lanesDone
		log.Info("lanes stopped")
	}
}

// serveHTTP serves the pages on ln until ctx ends, then shuts down within 15 s.
// Without Discord sign-in it prints a first owner sign-in link.
func serveHTTP(ctx context.Context, ln net.Listener, cfg Config, o Options, st *store.Store, deps handlers.Deps, stdout io.Writer, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           handlers.NewServer(deps),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "public_base_url", cfg.PublicBaseURL)
	fmt.Fprintf(stdout, "mangabookmark is running on %s\n", cfg.PublicBaseURL)
	if o.Ready != nil {
		o.Ready(st)
	}
	if !cfg.OAuth() && !o.OwnLinks {
		link, err := handlers.NewLoginLink(ctx, st, cfg.PublicBaseURL, cfg.OwnerDiscordID, o.Now())
		switch {
		case err != nil && ctx.Err() != nil:
			// Stopped while starting: no link, and no fault either.
		case err != nil:
			log.Error("could not create the owner sign-in link", "err", err)
		default:
			fmt.Fprintf(stdout, "Discord sign-in is not configured. Owner sign-in link (single use, valid %s):\n  %s\n", handlers.LoginLinkTTL, link)
		}
	}
	select {
	case err := <-served:
		return fmt.Errorf("http server stopped: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		log.Warn("http shutdown did not finish cleanly", "err", err)
	}
	return nil
}

// KeyFor returns the configured key, or one generated once and kept (0600)
// in the data directory so sessions survive restarts.
func KeyFor(configured word.Secret, dataDir, file string) ([]byte, error) {
	if configured.Set() {
		return []byte(configured.Reveal()), nil
	}
	p := filepath.Join(dataDir, file)
	if b, err := os.ReadFile(p); err == nil {
		if err := CheckKey(b); err != nil {
			return nil, fmt.Errorf("%s %w; delete it to generate a new one", p, err)
		}
		return []byte(strings.TrimSpace(string(b))), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dataDir, err)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	k := hex.EncodeToString(b)
	if err := os.WriteFile(p, []byte(k+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", p, err)
	}
	return []byte(k), nil
}

// CheckKey is the rule a session.key or token.key file must pass for serve
// to start: at least 32 characters once trimmed. restore checks a backup's
// keys with it before it writes anything (ADR 0023).
func CheckKey(b []byte) error {
	if len(strings.TrimSpace(string(b))) < 32 {
		return errors.New("holds a key shorter than 32 characters")
	}
	return nil
}

// zoneName is TIME_ZONE as the notices command reads it back: a zone name,
// "Local" for the server's own zone (an unset TIME_ZONE), "UTC" for none.
func zoneName(z *time.Location) string {
	if z == nil {
		return "UTC"
	}
	return z.String()
}
