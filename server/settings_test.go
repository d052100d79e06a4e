package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/announce"
	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// wired is what one start makes of its settings, read where Serve builds
// it: the log, the listeners, the store's pools, the parts wire returns and
// the options the notifier, the Announcer and the push Sender are built
// from.
type wired struct {
	debug             bool // the log writes debug lines
	addr, metricsAddr string
	database          string // the store's database name
	pagesPool         int32  // the store's two pools' sizes
	lanesPool         int32
	parts             parts
	notices           notify.Options
	announce          announce.Options
	push              announce.PushOptions
}

// wireFor starts what Serve starts with env, up to and not including the
// running: the listeners and the store are closed again before it returns.
func wireFor(t *testing.T, env map[string]string) wired {
	t.Helper()
	cfg, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	ctx, o := context.Background(), Options{Now: time.Now}
	log := cfg.logger(io.Discard)
	w := wired{debug: log.Enabled(ctx, slog.LevelDebug)}
	ln, mln, err := listen(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	w.addr = ln.Addr().String()
	ln.Close()
	if mln != nil {
		w.metricsAddr = mln.Addr().String()
		mln.Close()
	}
	st, stop, err := openStore(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	w.database = st.Pool().Config().ConnConfig.Database
	w.pagesPool, w.lanesPool = st.Pool().Config().MaxConns, st.Lanes().Pool().Config().MaxConns
	if w.parts, err = wire(ctx, cfg, &o, st, log); err != nil {
		t.Fatal(err)
	}
	w.notices = noticesOptions(cfg, o, st, log)
	w.announce = announceOptions(cfg, o, st, log)
	w.push = pushOptions(cfg, st, announce.VAPIDKeys{}, log)
	return w
}

// A reach is one place a setting must arrive: the part, what it holds
// there, and what the setting says it should hold.
type reach struct {
	part      string
	got, want any
}

// Every setting the server reads reaches the part that uses it: each row
// sets one (with the settings it needs beside it) on a working start and
// names where its value must arrive; the same places on the start without
// it must differ, so each row can fail. A setting LoadConfig reads without
// a row, or a Config field no row changes, fails the test: a new setting
// comes with the proof that something uses it.
func TestEverySettingReachesThePartThatUsesIt(t *testing.T) {
	t.Parallel()
	base := map[string]string{"DATABASE_URL": storetest.URL(t), "DATA_DIR": t.TempDir(), "LISTEN_ADDR": "127.0.0.1:0"}
	rows := settingRows(t)
	guardSettingRows(t, base, rows)
	without := wireFor(t, base)
	for _, r := range rows {
		env := map[string]string{}
		for _, set := range []map[string]string{base, r.also, {r.name: r.value}} {
			for k, v := range set {
				env[k] = v
			}
		}
		// Before, then with: the DATA_DIR row's keys appear with it.
		before := r.reaches(without)
		with := r.reaches(wireFor(t, env))
		for i, p := range with {
			if !reflect.DeepEqual(p.got, p.want) {
				t.Errorf("%s=%s does not reach %s: it holds %v, want %v", r.name, r.value, p.part, p.got, p.want)
			}
			if reflect.DeepEqual(before[i].got, p.want) {
				t.Errorf("%s=%s: %s holds %v without the setting too, so this row cannot fail; give it another value", r.name, r.value, p.part, p.want)
			}
		}
	}
}

// settingRow is one setting, its value, the settings it needs beside it,
// and where that value must arrive.
type settingRow struct {
	name, value string
	also        map[string]string
	reaches     func(w wired) []reach
}

// settingRows is a row per setting, each value other than its default.
func settingRows(t *testing.T) []settingRow {
	dataDir, otherDB := t.TempDir(), storetest.URL(t)
	dbName := strings.TrimPrefix(must(url.Parse(otherDB)).Path, "/")
	listenAt, metricsAt := freeAddr(t), freeAddr(t)
	const (
		sessionKey   = "a-session-key-of-the-owner-0123456789"
		tokenKey     = "a-token-key-of-the-owner-0123456789ab"
		metricsToken = "a-metrics-token-0123456789"
		ownersHook   = "https://discord.example/api/webhooks/1/owner"
		readersHook  = "https://discord.example/api/webhooks/2/readers"
		public       = "https://bookmarks.example.org"
		sidecar      = "ws://127.0.0.1:9222"
	)
	oauth := map[string]string{"DISCORD_CLIENT_ID": "1234", "DISCORD_CLIENT_SECRET": "a-client-secret",
		"DISCORD_GUILD_ID": "111", "OWNER_DISCORD_ID": "900"}
	readersHash := must(announce.NewDiscord(readersHook, nil)).WebhookHash()
	lanes := func(part string, got func(w wired) any, want any) func(w wired) []reach {
		return func(w wired) []reach { return []reach{{"the Lanes' " + part, got(w), want}} }
	}
	return []settingRow{
		{name: "DATABASE_URL", value: otherDB, reaches: func(w wired) []reach {
			return []reach{{"the store's database", w.database, dbName}}
		}},
		{name: "DATABASE_POOL_SIZE", value: "3", reaches: func(w wired) []reach {
			return []reach{{"the pages' pool size", w.pagesPool, int32(3)}}
		}},
		{name: "DATABASE_LANE_POOL_SIZE", value: "2", reaches: func(w wired) []reach {
			return []reach{{"the Lanes' pool size", w.lanesPool, int32(2)}}
		}},
		{name: "DATABASE_REQUEST_TIMEOUT", value: "7s", reaches: func(w wired) []reach {
			return []reach{{"the pages' RequestTimeout", w.parts.pages.RequestTimeout, 7 * time.Second}}
		}},
		{name: "DATA_DIR", value: dataDir, reaches: func(w wired) []reach {
			return []reach{{"the keys kept in DATA_DIR", keptIn(dataDir), []string{"session.key", "token.key", "vapid.json"}}}
		}},
		{name: "LISTEN_ADDR", value: listenAt, reaches: func(w wired) []reach {
			return []reach{{"the listener", w.addr, listenAt},
				{"the pages' PublicBaseURL, PUBLIC_BASE_URL unset", w.parts.pages.PublicBaseURL, "http://" + listenAt}}
		}},
		{name: "PUBLIC_BASE_URL", value: public, reaches: func(w wired) []reach {
			return []reach{{"the pages' PublicBaseURL", w.parts.pages.PublicBaseURL, public},
				{"the owner notices' PublicBaseURL", w.notices.PublicBaseURL, public},
				{"the Announcer's PublicBaseURL", w.announce.PublicBaseURL, public},
				{"the push Sender's VAPID Subject", w.push.Subject, public}}
		}},
		{name: "DISCORD_CLIENT_ID", value: "1234", also: oauth, reaches: func(w wired) []reach {
			return []reach{{"the pages' Discord ClientID", discordOf(w).ClientID, "1234"}}
		}},
		{name: "DISCORD_CLIENT_SECRET", value: "a-client-secret", also: oauth, reaches: func(w wired) []reach {
			return []reach{{"the pages' Discord ClientSecret", discordOf(w).ClientSecret, "a-client-secret"}}
		}},
		{name: "DISCORD_GUILD_ID", value: "111", also: oauth, reaches: func(w wired) []reach {
			return []reach{{"the pages' Discord GuildID", discordOf(w).GuildID, "111"}}
		}},
		{name: "OWNER_DISCORD_ID", value: "900", reaches: func(w wired) []reach {
			return []reach{{"the pages' OwnerID", w.parts.pages.OwnerID, "900"}}
		}},
		{name: "SESSION_KEY", value: sessionKey, reaches: func(w wired) []reach {
			return []reach{{"the pages' SessionKey", string(w.parts.pages.SessionKey), sessionKey}}
		}},
		{name: "TOKEN_KEY", value: tokenKey, reaches: func(w wired) []reach {
			return []reach{{"the pages' TokenKey", string(w.parts.pages.TokenKey), tokenKey}}
		}},
		{name: "DISCORD_WEBHOOK_URL", value: ownersHook, reaches: func(w wired) []reach {
			return []reach{{"the owner notices' WebhookURL", w.notices.WebhookURL.Reveal(), ownersHook}}
		}},
		{name: "READERS_WEBHOOK_URL", value: readersHook, reaches: func(w wired) []reach {
			return []reach{{"the pages' ReadersWebhook", w.parts.pages.ReadersWebhook, true},
				{"the Announcer's Discord Sender (its hash on the Lanes page)", w.parts.pages.ReadersWebhookHash, readersHash}}
		}},
		{name: "BROWSER_WS_URL", value: sidecar, reaches: func(w wired) []reach {
			return []reach{{"the Reader's BrowserWSURL", w.parts.readerOptions.BrowserWSURL, sidecar},
				{"the pages' Sidecar", w.parts.pages.Sidecar, true}}
		}},
		{name: "BROWSER_SITES", value: "kagane", reaches: func(w wired) []reach {
			return []reach{{"the Reader's BrowserSites", w.parts.readerOptions.BrowserSites.Names(), []string{"kagane"}},
				{"the pages' BrowserSites", w.parts.pages.BrowserSites.Names(), []string{"kagane"}},
				{"the owner notices' BrowserSites", w.notices.BrowserSites.Names(), []string{"kagane"}}}
		}},
		{name: "SITE_BASE_URLS", value: "asurascans=http://127.0.0.1:9001", reaches: func(w wired) []reach {
			return []reach{{"the Reader's BaseURLs", baseURLs(w), map[string]string{"asurascans": "http://127.0.0.1:9001"}}}
		}},
		{name: "POLL_SPACING", value: "7s", reaches: lanes("Spacing", func(w wired) any { return w.parts.lanes.Spacing }, 7*time.Second)},
		{name: "LISTING_EVERY", value: "0", reaches: func(w wired) []reach {
			return []reach{{"the Lanes' ListingEvery", w.parts.lanes.ListingEvery, time.Duration(0)},
				{"the pages' ListingOff", w.parts.pages.ListingOff, true}}
		}},
		{name: "POLL_EVERY", value: "6h,asurascans=2h", reaches: lanes("PollEvery of asurascans and novelfull",
			func(w wired) any {
				return []time.Duration{w.parts.lanes.PollEvery["asurascans"], w.parts.lanes.PollEvery["novelfull"]}
			}, []time.Duration{2 * time.Hour, 6 * time.Hour})},
		{name: "POLL_BACKSTOP", value: "200h", reaches: lanes("Backstop", func(w wired) any { return w.parts.lanes.Backstop }, 200*time.Hour)},
		{name: "ORPHAN_RETENTION", value: "2160h", reaches: lanes("OrphanRetention",
			func(w wired) any { return w.parts.lanes.OrphanRetention }, 2160*time.Hour)},
		{name: "METRICS_TOKEN", value: metricsToken, reaches: func(w wired) []reach {
			return []reach{{"the main listener's /metrics, with the token", scrape(w, metricsToken), http.StatusOK},
				{"the main listener's /metrics, without it", scrape(w, ""), http.StatusUnauthorized}}
		}},
		{name: "METRICS_ADDR", value: metricsAt, reaches: func(w wired) []reach {
			return []reach{{"the /metrics listener", w.metricsAddr, metricsAt}}
		}},
		{name: "LOG_LEVEL", value: "debug", reaches: func(w wired) []reach {
			return []reach{{"the log, writing debug lines", w.debug, true}}
		}},
		{name: "TIME_ZONE", value: "Asia/Tokyo", reaches: func(w wired) []reach {
			return []reach{{"the pages' Zone", zoneName(w.parts.pages.Zone), "Asia/Tokyo"}}
		}},
	}
}

// guardSettingRows fails when the rows and the settings part ways: a
// setting LoadConfig reads without a row, a row for a setting it never
// reads, or a Config field that no row's setting changes.
func guardSettingRows(t *testing.T, base map[string]string, rows []settingRow) {
	t.Helper()
	read, named := settingsRead(t), map[string]bool{}
	var unread []string
	for _, r := range rows {
		named[r.name] = true
		if !read[r.name] {
			unread = append(unread, r.name)
		}
	}
	var missing []string
	for k := range read {
		if !named[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 || len(unread) > 0 {
		t.Fatalf("settings LoadConfig reads without a row here: %v; rows for settings it never reads: %v", missing, unread)
	}
	load := func(env map[string]string) reflect.Value {
		cfg, err := LoadConfig(func(k string) string {
			if v, ok := env[k]; ok {
				return v
			}
			return base[k]
		})
		if err != nil {
			t.Fatalf("LoadConfig: %v", err)
		}
		return reflect.ValueOf(cfg)
	}
	plain, changed := load(nil), map[string]bool{}
	for _, r := range rows {
		env := map[string]string{}
		for k, v := range r.also {
			env[k] = v
		}
		env[r.name] = r.value
		c := load(env)
		for i := range c.NumField() {
			if !reflect.DeepEqual(c.Field(i).Interface(), plain.Field(i).Interface()) {
				changed[c.Type().Field(i).Name] = true
			}
		}
	}
	for _, f := range reflect.VisibleFields(plain.Type()) {
		if !changed[f.Name] {
			t.Errorf("Config.%s: no row's setting changes it, so nothing proves it reaches a part", f.Name)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// keptIn is the files the keys left in dir, sorted.
func keptIn(dir string) []string {
	var names []string
	for _, n := range []string{"session.key", "token.key", "vapid.json"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			names = append(names, n)
		}
	}
	return names
}

// discordOf is the pages' Discord sign-in, empty when it is off.
func discordOf(w wired) handlers.DiscordAuth {
	if w.parts.pages.Discord == nil {
		return handlers.DiscordAuth{}
	}
	return *w.parts.pages.Discord
}

// baseURLs is the Reader's rewrites, each as its address.
func baseURLs(w wired) map[string]string {
	out := map[string]string{}
	for site, u := range w.parts.readerOptions.BaseURLs {
		out[site] = u.String()
	}
	return out
}

// scrape is the status of the main listener's /metrics asked with token
// ("" for none); 0 when the pages serve no /metrics.
func scrape(w wired, token string) int {
	h := w.parts.pages.MetricsHandler
	if h == nil {
		return 0
	}
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	h.ServeHTTP(rec, r)
	return rec.Code
}
