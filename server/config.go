package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/fetch"
	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/poller/schedule"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// Config is every setting, read once at start from the environment.
type Config struct {
	DatabaseURL   word.Secret // may carry a password; unset = the embedded local cluster
	DataDir       string      // the local cluster, generated keys
	ListenAddr    string
	PublicBaseURL string

	DiscordClientID     string
	DiscordClientSecret word.Secret
	DiscordGuildID      string
	OwnerDiscordID      string

	SessionKey word.Secret // unset: generated once and kept in DataDir
	TokenKey   word.Secret // unset: generated once and kept in DataDir

	BrowserWSURL      string
	BrowserSites      word.BrowserSites   // BROWSER_SITES, parsed
	SiteBases         map[string]*url.URL // SITE_BASE_URLS, parsed
	DiscordWebhookURL word.Secret
	// ReadersWebhookURL is READERS_WEBHOOK_URL: the Readers' Discord
	// channel their announcements mention them in (CONTEXT.md, Reader
	// channel, Announcement); unset turns that channel off.
	ReadersWebhookURL word.Secret

	PollSpacing time.Duration // least time between two requests to one Site
	// ListingEvery is LISTING_EVERY: how often each Lane reads its Site's
	// latest-updates listing; 0 turns the listing off (ADR 0016).
	ListingEvery time.Duration
	// PollBackstop is POLL_BACKSTOP: the most time between two reads of a
	// Series that is not Finished, budget allowing.
	PollBackstop time.Duration
	// PollEvery is POLL_EVERY, parsed: each Site's pace, the floor of its
	// Lane's schedule (poller.ParsePollEvery).
	PollEvery map[string]time.Duration
	// OrphanRetention is ORPHAN_RETENTION: how long a Series nobody
	// bookmarks is kept before the Lane deletes it; 0 (the default) keeps
	// it forever (ADR 0024).
	OrphanRetention time.Duration

	PoolSize       int32         // DATABASE_POOL_SIZE: pages and /healthz
	LanePoolSize   int32         // DATABASE_LANE_POOL_SIZE: Lanes and owner notices
	RequestTimeout time.Duration // DATABASE_REQUEST_TIMEOUT: a request's database work

	// MetricsToken is METRICS_TOKEN: /metrics answers only a request
	// carrying it as a bearer token; with METRICS_ADDR unset it turns
	// /metrics on, on the main listener.
	MetricsToken word.Secret
	// MetricsAddr is METRICS_ADDR: a listener of its own serving only
	// /metrics (behind MetricsToken when that is set too), and then never
	// on the main listener. Neither set: no /metrics at all.
	MetricsAddr string

	LogLevel slog.Level
	// TimeZone is TIME_ZONE, the owner's time zone: every absolute time on
	// the pages and in the notices command is written in it (word.When).
	// Unset is the server's own zone.
	TimeZone *time.Location
}

// DefaultListenAddr is LISTEN_ADDR when it is unset.
const DefaultListenAddr = "127.0.0.1:8080"

// LocalOwnerID is the owner's id when Discord OAuth is not configured.
const LocalOwnerID = "local-owner"

// logger is the server's log on w, from LOG_LEVEL up.
func (c Config) logger(w io.Writer) *slog.Logger { return NewLogger(w, c.LogLevel) }

// OAuth reports whether Discord sign-in is configured.
func (c Config) OAuth() bool { return c.DiscordClientID != "" }

// LoadConfig reads and validates the environment. A bad value stops the start
// with one line naming the variable and what is wrong (never its value when
// it is a secret).
func LoadConfig(getenv func(string) string) (Config, error) {
	get := func(k, def string) string {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
		return def
	}
	c := Config{
		DatabaseURL:         word.Secret(get("DATABASE_URL", "")),
		DataDir:             filepath.Clean(get("DATA_DIR", "var")),
		ListenAddr:          get("LISTEN_ADDR", DefaultListenAddr),
		DiscordClientID:     get("DISCORD_CLIENT_ID", ""),
		DiscordClientSecret: word.Secret(get("DISCORD_CLIENT_SECRET", "")),
		DiscordGuildID:      get("DISCORD_GUILD_ID", ""),
		OwnerDiscordID:      get("OWNER_DISCORD_ID", ""),
		SessionKey:          word.Secret(get("SESSION_KEY", "")),
		TokenKey:            word.Secret(get("TOKEN_KEY", "")),
		BrowserWSURL:        get("BROWSER_WS_URL", ""),
		DiscordWebhookURL:   word.Secret(get("DISCORD_WEBHOOK_URL", "")),
		ReadersWebhookURL:   word.Secret(get("READERS_WEBHOOK_URL", "")),
		MetricsToken:        word.Secret(get("METRICS_TOKEN", "")),
		MetricsAddr:         get("METRICS_ADDR", ""),
	}
	var errs []error
	bad := func(name, why string) { errs = append(errs, fmt.Errorf("%s: %s", name, why)) }
	c.checkAddresses(get, bad)
	c.checkDiscord(bad)
	c.checkSecrets(bad)
	c.checkMetrics(bad)
	if err := c.readTunables(get, bad); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

// checkAddresses checks the addresses the server listens on and talks to,
// and derives PUBLIC_BASE_URL from LISTEN_ADDR when it is unset.
func (c *Config) checkAddresses(get func(k, def string) string, bad func(name, why string)) {
	if c.DatabaseURL.Set() {
		u, err := url.Parse(c.DatabaseURL.Reveal())
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			bad("DATABASE_URL", "must be a postgres:// URL")
		}
	}
	host, port, err := net.SplitHostPort(c.ListenAddr)
	if err != nil || port == "" {
		bad("LISTEN_ADDR", "must be host:port, e.g. 127.0.0.1:8080")
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	c.PublicBaseURL = strings.TrimRight(get("PUBLIC_BASE_URL", "http://"+net.JoinHostPort(host, port)), "/")
	if u, err := url.Parse(c.PublicBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		bad("PUBLIC_BASE_URL", "must be an absolute http(s) URL such as https://bookmarks.example.org")
	}
	if c.BrowserWSURL != "" {
		if u, err := url.Parse(c.BrowserWSURL); err != nil || (u.Scheme != "ws" && u.Scheme != "wss" && u.Scheme != "http") || u.Host == "" {
			bad("BROWSER_WS_URL", "must be a ws:// address of the browser's remote debugging port")
		}
	}
}

// checkDiscord checks Discord sign-in's settings, which come as a set, and
// names the local owner when Discord sign-in is off.
func (c *Config) checkDiscord(bad func(name, why string)) {
	if c.OAuth() {
		if !c.DiscordClientSecret.Set() {
			bad("DISCORD_CLIENT_SECRET", "is required when DISCORD_CLIENT_ID is set")
		}
		if c.DiscordGuildID == "" {
			bad("DISCORD_GUILD_ID", "is required when DISCORD_CLIENT_ID is set")
		}
		if c.OwnerDiscordID == "" {
			bad("OWNER_DISCORD_ID", "is required when DISCORD_CLIENT_ID is set")
		}
	} else if c.OwnerDiscordID == "" {
		c.OwnerDiscordID = LocalOwnerID
	}
	for _, id := range []struct{ name, v string }{{"DISCORD_GUILD_ID", c.DiscordGuildID}, {"OWNER_DISCORD_ID", c.OwnerDiscordID}} {
		if id.v != "" && id.v != LocalOwnerID && !isSnowflake(id.v) {
			bad(id.name, "must be a Discord id (digits only)")
		}
	}
}

// checkSecrets checks the keys and the webhook; no message quotes one.
func (c *Config) checkSecrets(bad func(name, why string)) {
	for _, k := range []struct {
		name string
		v    word.Secret
	}{{"SESSION_KEY", c.SessionKey}, {"TOKEN_KEY", c.TokenKey}} {
		if k.v.Set() && len(k.v.Reveal()) < 32 {
			bad(k.name, "must be at least 32 characters (e.g. `openssl rand -hex 32`)")
		}
	}
	// notify's own check, so the start refuses exactly what the notifier
	// would (its errors never quote the address).
	for _, w := range []struct {
		name string
		v    word.Secret
	}{{"DISCORD_WEBHOOK_URL", c.DiscordWebhookURL}, {"READERS_WEBHOOK_URL", c.ReadersWebhookURL}} {
		if w.v.Set() && notify.ValidateWebhookURL(w.v) != nil {
			bad(w.name, "must be an absolute https URL without credentials (plain http only to a loopback host)")
		}
	}
}

// MetricsOn reports whether /metrics is served anywhere.
func (c Config) MetricsOn() bool { return c.MetricsToken.Set() || c.MetricsAddr != "" }

// checkMetrics checks /metrics' listener and token; no message quotes the
// token.
func (c *Config) checkMetrics(bad func(name, why string)) {
	if c.MetricsToken.Set() {
		t := c.MetricsToken.Reveal()
		ok := len(t) >= 16
		for i := 0; i < len(t) && ok; i++ {
			ok = t[i] > ' ' && t[i] < 0x7f // one header value, as Prometheus' bearer_token sends it
		}
		if !ok {
			bad("METRICS_TOKEN", "must be at least 16 printable characters without spaces (e.g. `openssl rand -hex 32`)")
		}
	}
	if c.MetricsAddr == "" {
		return
	}
	if _, port, err := net.SplitHostPort(c.MetricsAddr); err != nil || port == "" {
		bad("METRICS_ADDR", "must be host:port, e.g. 127.0.0.1:9090")
	} else if c.MetricsAddr == c.ListenAddr {
		bad("METRICS_ADDR", "must differ from LISTEN_ADDR (unset it to serve /metrics there, behind METRICS_TOKEN)")
	}
}

// readTunables reads the settings with a default: pace, pools, deadlines,
// routes, stand-in addresses and the log level. The error is a list
// parser's own.
func (c *Config) readTunables(get func(k, def string) string, bad func(name, why string)) error {
	c.PollSpacing = poller.DefaultSpacing
	if v := get("POLL_SPACING", ""); v != "" {
		if d, err := time.ParseDuration(v); err != nil || d < 0 || d > 10*time.Minute {
			bad("POLL_SPACING", "must be a duration between 0s and 10m, e.g. 3s")
		} else {
			c.PollSpacing = d
		}
	}
	c.ListingEvery = duration(get("LISTING_EVERY", ""), schedule.DefaultListingEvery, 0, 24*time.Hour,
		"LISTING_EVERY", "must be a duration between 0s (off) and 24h, e.g. 5m", bad)
	c.PollBackstop = duration(get("POLL_BACKSTOP", ""), schedule.DefaultBackstop, time.Hour, 90*24*time.Hour,
		"POLL_BACKSTOP", "must be a duration between 1h and 2160h (90 days), e.g. 168h", bad)
	// Less than a day would take a Series the owner's box added alone
	// before anyone could bookmark it.
	const keepWhy = "must be 0 (keep orphans) or a duration between 24h and 87600h (10 years), e.g. 2160h"
	c.OrphanRetention = duration(get("ORPHAN_RETENTION", ""), 0, 0, 10*365*24*time.Hour, "ORPHAN_RETENTION", keepWhy, bad)
	if c.OrphanRetention > 0 && c.OrphanRetention < 24*time.Hour {
		bad("ORPHAN_RETENTION", keepWhy)
	}
	c.PoolSize = poolSize(get("DATABASE_POOL_SIZE", ""), store.DefaultPoolSize, "DATABASE_POOL_SIZE", bad)
	c.LanePoolSize = poolSize(get("DATABASE_LANE_POOL_SIZE", ""), store.DefaultLanePoolSize, "DATABASE_LANE_POOL_SIZE", bad)
	c.RequestTimeout = handlers.DefaultRequestTimeout
	if v := get("DATABASE_REQUEST_TIMEOUT", ""); v != "" {
		if d, err := time.ParseDuration(v); err != nil || d < 100*time.Millisecond || d > time.Minute {
			bad("DATABASE_REQUEST_TIMEOUT", "must be a duration between 100ms and 1m, e.g. 5s")
		} else {
			c.RequestTimeout = d
		}
	}
	if err := c.LogLevel.UnmarshalText([]byte(get("LOG_LEVEL", "info"))); err != nil {
		bad("LOG_LEVEL", "must be debug, info, warn or error")
	}
	var zerr error
	if c.TimeZone, zerr = word.ParseZone(get("TIME_ZONE", "")); zerr != nil {
		bad("TIME_ZONE", zerr.Error())
	}
	var errs []error
	var err error
	if c.BrowserSites, err = word.ParseBrowserSites(get("BROWSER_SITES", word.DefaultBrowserSites)); err != nil {
		errs = append(errs, err)
	}
	if c.SiteBases, err = fetch.ParseBaseURLs(get("SITE_BASE_URLS", "")); err != nil {
		errs = append(errs, err)
	}
	if c.PollEvery, err = poller.ParsePollEvery(get("POLL_EVERY", "")); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// poolSize reads a pool size setting: a whole number from 1 to 100.
func poolSize(v string, def int32, name string, bad func(name, why string)) int32 {
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 1 || n > 100 {
		bad(name, "must be a whole number from 1 to 100")
		return def
	}
	return int32(n)
}

func isSnowflake(s string) bool {
	if len(s) == 0 || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// duration reads one duration setting: def when unset, and a sentence for
// bad when it is not a duration within [least, most].
func duration(v string, def, least, most time.Duration, name, why string, bad func(name, why string)) time.Duration {
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < least || d > most {
		bad(name, why)
		return def
	}
	return d
}
