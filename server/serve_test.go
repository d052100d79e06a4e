package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

const marker = "SECRETMARKER"

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// withPassword puts a password marker into a database URL: trust auth never
// asks for it, so the server starts, and the marker must still never print.
func withPassword(u string) string {
	return strings.Replace(u, "@", ":"+marker+"-dbpass@", 1)
}

func TestSecretsNeverReachALogLineOrAPage(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	env := map[string]string{
		"DATABASE_URL":          withPassword(storetest.URL(t)),
		"DATA_DIR":              t.TempDir(),
		"LISTEN_ADDR":           addr,
		"DISCORD_CLIENT_ID":     "1234",
		"DISCORD_CLIENT_SECRET": marker + "-client-secret",
		"DISCORD_GUILD_ID":      "111",
		"OWNER_DISCORD_ID":      "900",
		"SESSION_KEY":           marker + "-session-key-0123456789abcdef",
		"TOKEN_KEY":             marker + "-token-key-0123456789abcdefgh",
		"DISCORD_WEBHOOK_URL":   "https://discord.example/api/webhooks/1/" + marker + "-webhook",
		"METRICS_TOKEN":         marker + "-metrics-token",
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, func(k string) string { return env[k] }, &stdout, &stderr)
	}()
	base := "http://" + addr
	waitHealthy(t, base, done)

	var pages strings.Builder
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 5 * time.Second}
	for _, p := range []string{"/", "/login", "/login/discord", "/auth/discord/callback?code=x&state=forged", "/admin", "/no-such-page", "/login/not-a-token", "/healthz", "/readyz", "/metrics"} {
		resp, err := noRedirect.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Fprintf(&pages, "%s %d %v\n%s\n", p, resp.StatusCode, resp.Header, b)
	}
	resp, err := noRedirect.PostForm(base+"/login/not-a-token", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	pages.Write(b)

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	for name, text := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String(), "pages": pages.String()} {
		if strings.Contains(text, marker) {
			t.Errorf("a secret reached %s:\n%s", name, text)
		}
	}
	if !strings.Contains(stderr.String(), "shutting down") {
		t.Errorf("no shutdown line in the log:\n%s", stderr.String())
	}
}

func TestABadSettingStopsTheStartWithOneLineNamingIt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"a listen address without a port", map[string]string{"LISTEN_ADDR": "localhost"}, "LISTEN_ADDR"},
		{"a public address that is not http(s)", map[string]string{"PUBLIC_BASE_URL": "ftp://x"}, "PUBLIC_BASE_URL"},
		{"a short session key", map[string]string{"SESSION_KEY": marker}, "SESSION_KEY"},
		{"a short token key", map[string]string{"TOKEN_KEY": marker}, "TOKEN_KEY"},
		{"a webhook over plain http to another host", map[string]string{"DISCORD_WEBHOOK_URL": "http://discord.example/" + marker}, "DISCORD_WEBHOOK_URL"},
		{"a Readers' webhook over plain http to another host", map[string]string{"READERS_WEBHOOK_URL": "http://discord.example/" + marker}, "READERS_WEBHOOK_URL"},
		{"a database address that is not postgres", map[string]string{"DATABASE_URL": "mysql://u:" + marker + "@h/db"}, "DATABASE_URL"},
		{"a database address pgx cannot read", map[string]string{"DATABASE_URL": "postgres://u:" + marker + "@127.0.0.1/db?sslmode=" + marker}, "DATABASE_URL"},
		{"a database that does not answer", map[string]string{"DATABASE_URL": "postgres://u:" + marker + "@127.0.0.1:1/db?connect_timeout=2"}, "DATABASE_URL"},
		{"OAuth without its secret", map[string]string{"DISCORD_CLIENT_ID": "1", "DISCORD_GUILD_ID": "2", "OWNER_DISCORD_ID": "3"}, "DISCORD_CLIENT_SECRET"},
		{"an owner id that is not a Discord id", map[string]string{"OWNER_DISCORD_ID": "bob"}, "OWNER_DISCORD_ID"},
		{"a pool of no connections", map[string]string{"DATABASE_POOL_SIZE": "0"}, "DATABASE_POOL_SIZE"},
		{"a Lane pool size that is not a number", map[string]string{"DATABASE_LANE_POOL_SIZE": "many"}, "DATABASE_LANE_POOL_SIZE"},
		{"a request deadline that is not a duration", map[string]string{"DATABASE_REQUEST_TIMEOUT": "forever"}, "DATABASE_REQUEST_TIMEOUT"},
		{"a browser address that is not ws", map[string]string{"BROWSER_WS_URL": "chrome"}, "BROWSER_WS_URL"},
		{"a listing pace that is not a duration", map[string]string{"LISTING_EVERY": "often"}, "LISTING_EVERY"},
		{"a listing pace beyond a day", map[string]string{"LISTING_EVERY": "25h"}, "LISTING_EVERY"},
		{"a backstop under an hour", map[string]string{"POLL_BACKSTOP": "30m"}, "POLL_BACKSTOP"},
		{"a pace for a Site nobody knows", map[string]string{"POLL_EVERY": "1h,mangadex=2h"}, "POLL_EVERY"},
		{"a pace that is not a duration", map[string]string{"POLL_EVERY": "asurascans=often"}, "POLL_EVERY"},
		{"an orphan retention under a day", map[string]string{"ORPHAN_RETENTION": "12h"}, "ORPHAN_RETENTION"},
		{"an orphan retention that is not a duration", map[string]string{"ORPHAN_RETENTION": "90d"}, "ORPHAN_RETENTION"},
		{"a time zone nobody knows", map[string]string{"TIME_ZONE": "Mars/Olympus"}, "TIME_ZONE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var out, errw bytes.Buffer
			// A free port unless the case sets its own: the address is taken
			// before the database is asked, so a case that gets that far must
			// not depend on 8080 being free on this machine.
			getenv := func(k string) string {
				if v, ok := c.env[k]; ok || k != "LISTEN_ADDR" {
					return v
				}
				return "127.0.0.1:0"
			}
			err := Run(context.Background(), getenv, &out, &errw)
			if err == nil {
				t.Fatal("the server started")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, c.want+":") || strings.Count(msg, "\n") != 0 {
				t.Fatalf("error %q: want one line starting with %s", msg, c.want)
			}
			if strings.Contains(msg, marker) || strings.Contains(out.String()+errw.String(), marker) {
				t.Fatalf("the error printed a secret: %q", msg)
			}
		})
	}
}

func TestSecretsFormatAsAMaskEverywhere(t *testing.T) {
	t.Parallel()
	s := word.Secret(marker)
	cfg := Config{SessionKey: s, DiscordClientSecret: s, TokenKey: s, DiscordWebhookURL: s, DatabaseURL: s, MetricsToken: s}
	for _, text := range []string{fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q %x", s, cfg, cfg, s, s, s)} {
		if strings.Contains(text, marker) {
			t.Fatalf("formatted a secret: %s", text)
		}
	}
	if s.Reveal() != marker {
		t.Fatal("Reveal lost the value")
	}
}

func waitHealthy(t *testing.T, base string, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("run stopped early: %v", err)
		default:
		}
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the server never became healthy")
}

// TestTheLanesPageIsToldWhenTheListingIsOff: LISTING_EVERY=0 reaches the
// pages as Deps.ListingOff, and its default leaves the listing on.
func TestTheLanesPageIsToldWhenTheListingIsOff(t *testing.T) {
	t.Parallel()
	for every, off := range map[string]bool{"0": true, "": false, "2m": false} {
		cfg, err := LoadConfig(func(k string) string {
			return map[string]string{"LISTING_EVERY": every, "DATA_DIR": t.TempDir(), "OWNER_DISCORD_ID": "1"}[k]
		})
		if err != nil {
			t.Fatalf("LISTING_EVERY=%q: %v", every, err)
		}
		deps, err := handlerDeps(cfg, Options{}, nil, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if deps.ListingOff != off {
			t.Errorf("LISTING_EVERY=%q: ListingOff %v, want %v", every, deps.ListingOff, off)
		}
	}
}

// POLL_EVERY's per-Site pace and ORPHAN_RETENTION reach the Lanes' Config;
// unset, every Site takes the default pace and orphans are kept.
func TestThePacePerSiteAndTheOrphanRetentionReachTheLanes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		every, keep string
		asura, nf   time.Duration
		retention   time.Duration
	}{
		{"", "", poller.DefaultPollEvery, poller.DefaultPollEvery, 0},
		{"6h,asurascans=2h", "2160h", 2 * time.Hour, 6 * time.Hour, 90 * 24 * time.Hour},
	} {
		cfg, err := LoadConfig(func(k string) string {
			return map[string]string{"POLL_EVERY": c.every, "ORPHAN_RETENTION": c.keep, "DATA_DIR": t.TempDir(), "OWNER_DISCORD_ID": "1"}[k]
		})
		if err != nil {
			t.Fatalf("POLL_EVERY=%q ORPHAN_RETENTION=%q: %v", c.every, c.keep, err)
		}
		lanes := lanesConfig(cfg, Options{}, slog.New(slog.DiscardHandler), nil, nil, nil)
		if lanes.PollEvery["asurascans"] != c.asura || lanes.PollEvery["novelfull"] != c.nf || lanes.OrphanRetention != c.retention {
			t.Errorf("POLL_EVERY=%q ORPHAN_RETENTION=%q: paces %v, retention %v", c.every, c.keep, lanes.PollEvery, lanes.OrphanRetention)
		}
	}
}
