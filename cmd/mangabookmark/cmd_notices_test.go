package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/server"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

const hookURL = "https://discord.example/api/webhooks/42/NOTICES-SECRET-MARKER"

// noticesDB is a fresh database where asurascans has stalled for 20 hours
// and novelfull has refused for 15, each with an open notice.
func noticesDB(t *testing.T, sent, failed bool) string {
	t.Helper()
	url := storetest.URL(t)
	s, err := store.Open(context.Background(), url, store.Pools{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	now := time.Now()
	for h := 20; h >= 0; h-- {
		at := now.Add(-time.Duration(h) * time.Hour)
		storetest.Insert(t, s.Pool(), storetest.Pass{Site: word.Asurascans, StartedAt: at, Due: 3})
		if h <= 15 {
			storetest.Insert(t, s.Pool(), storetest.Pass{Site: word.Novelfull, StartedAt: at, Skip: word.SkipRefusing})
		}
	}
	for _, k := range []struct {
		kind word.NoticeKind
		site string
	}{{word.Stall, "asurascans"}, {word.NoBrowserRoute, "novelfull"}} {
		if err := s.OpenNotice(ctx, k.kind, k.site); err != nil {
			t.Fatal(err)
		}
	}
	if sent {
		if err := deliver(ctx, s, "stall", "asurascans", store.Delivery{SentAt: now.Add(-7 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if err := deliver(ctx, s, "no-browser-route", "novelfull", store.Delivery{SentAt: now.Add(-2 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if failed {
		if err := deliver(ctx, s, "no-browser-route", "novelfull", store.Delivery{AttemptAt: now.Add(-time.Hour), Err: "Discord answered 500"}); err != nil {
			t.Fatal(err)
		}
	}
	return url
}

func TestTheNoticesCommandShowsWhatWasSentAndExitsNonZeroWhilePending(t *testing.T) {
	t.Parallel()
	// hook is what the server recorded at start: "on" (a webhook), "off"
	// (none), or "" (no server has recorded anything). env is the
	// command's own environment, which must not matter.
	cases := []struct {
		name        string
		sent        bool
		failed      bool
		args        []string
		hook        string
		env         map[string]string
		wantErr     string
		wantOut     []string
		wantNot     []string
		emptyDB     bool
		deadWebhook bool
	}{
		{
			name: "no open notice is a clean exit", emptyDB: true, hook: "on",
			wantOut: []string{"Owner notices are on: the server started at ", "No open owner notices."},
		},
		{
			name: "sent notices are listed under an empty environment with the server's webhook on", sent: true, hook: "on",
			wantOut: []string{
				"Owner notices are on", "stall", "asurascans", "(20 hours)", "sent at ",
				"no-browser-route", "novelfull", "(15 hours)",
			},
			wantNot: []string{"off"},
		},
		{
			name: "a pending notice says why and fails the exit", failed: true, hook: "on",
			wantOut: []string{
				"pending — last attempt failed: Discord answered 500 (1 attempt(s), last at ",
				"pending — not attempted yet",
			},
			wantErr: "2 owner notice(s) pending",
		},
		{
			name: "a dead webhook is shown until the setting changes", sent: true, deadWebhook: true, hook: "on",
			wantOut: []string{"The Discord webhook is dead: Discord answered 404 at "},
			wantErr: "webhook is dead",
		},
		{
			name: "the server's push off is said plainly, whatever this environment holds", emptyDB: true, hook: "off",
			env:     map[string]string{"DISCORD_WEBHOOK_URL": hookURL},
			wantOut: []string{"Owner notices are off: the server started at ", "without DISCORD_WEBHOOK_URL"},
		},
		{
			name: "a setting in this environment that the server does not use is not read", sent: true, hook: "on",
			env:     map[string]string{"DISCORD_WEBHOOK_URL": "http://discord.example/api/webhooks/42/NOTICES-SECRET-MARKER"},
			wantOut: []string{"Owner notices are on"},
		},
		{
			name: "notices left from when the push was on do not fail the exit once it is off", failed: true, hook: "off",
			wantOut: []string{"Owner notices are off", "not sent — owner notices are off"},
		},
		{
			name: "a database no server has started on says so", failed: true,
			wantOut: []string{"No server has recorded its webhook setting"},
		},
		{
			name: "json for scripts, still failing while pending", failed: true, args: []string{"--json"}, hook: "on",
			wantOut: []string{`"condition": "no-browser-route"`, `"last_error": "Discord answered 500"`, `"pending": true`, `"webhook_recorded_at": "`},
			wantErr: "pending",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var url string
			if tc.emptyDB {
				url = storetest.URL(t)
			} else {
				url = noticesDB(t, tc.sent, tc.failed)
			}
			s, err := store.Open(context.Background(), url, store.Pools{})
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(hookURL))
			hash := hex.EncodeToString(sum[:])
			if tc.hook != "" {
				w := store.ServerWebhook{Configured: tc.hook == "on", RecordedAt: time.Now()}
				if w.Configured {
					w.Hash = hash
				}
				if err := s.RecordServerWebhook(context.Background(), w); err != nil {
					t.Fatal(err)
				}
			}
			if tc.deadWebhook {
				if err := s.MarkWebhookDead(context.Background(), hash, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			env := map[string]string{"DATABASE_URL": url}
			for k, v := range tc.env {
				env[k] = v
			}
			var stdout, stderr bytes.Buffer
			err = runNotices(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr,
				func(k string) string { return env[k] })
			if tc.wantErr == "" && err != nil {
				t.Fatalf("exit: %v\n%s", err, stdout.String())
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("exit: %v, want an error containing %q", err, tc.wantErr)
			}
			out := stdout.String()
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(out, w) {
					t.Errorf("output says %q:\n%s", w, out)
				}
			}
			if strings.Contains(out+stderr.String(), "NOTICES-SECRET-MARKER") {
				t.Errorf("the webhook address was printed:\n%s", out)
			}
			if len(tc.args) > 0 && tc.args[0] == "--json" {
				var v struct {
					Enabled bool
					Notices []map[string]any
				}
				if err := json.Unmarshal(stdout.Bytes(), &v); err != nil || len(v.Notices) != 2 {
					t.Fatalf("json: %v %s", err, out)
				}
			}
		})
	}
}

func TestTheNoticesCommandNeedsADatabase(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	err := runNotices(context.Background(), nil, strings.NewReader(""), &out, &errb, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Fatalf("got %v", err)
	}
}

// deliver records a delivery the way a Notifier does: claim, then record.
func deliver(ctx context.Context, s *store.Store, kind word.NoticeKind, site string, d store.Delivery) error {
	if _, err := s.ClaimNotice(ctx, kind, site, "test", storetest.Milli(1), storetest.Milli(math.MaxInt64)); err != nil {
		return err
	}
	return s.RecordDelivery(ctx, kind, site, "test", d)
}

// The line `make test` prints names the server, never its password.
func TestTheTestDatabaseLineNamesTheServerAndNoPassword(t *testing.T) {
	t.Parallel()
	got := describeDB("postgres://alice:s3cret-PASSWORD@db.example:6543/x?sslmode=disable")
	if got != "on db.example:6543 as alice" || strings.Contains(got, "s3cret") {
		t.Errorf("got %q", got)
	}
	if got := describeDB("host=/tmp/pg user=postgres dbname=x"); got != "on the socket in /tmp/pg as postgres" {
		t.Errorf("socket: %q", got)
	}
}

// TestTheNoticesCommandDerivesWithTheServersBrowserSites: the conditions
// depend on which Sites have a browser route (a browser Site has no
// no-browser-route), so `notices` reads the set the server recorded at
// start, whatever BROWSER_SITES its own environment holds or lacks, and says
// what the server's own derivation says.
func TestTheNoticesCommandDerivesWithTheServersBrowserSites(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		server  word.BrowserSites // the server's BROWSER_SITES, parsed
		env     map[string]string
		holds   bool // novelfull's no-browser-route, refusing for 15 hours
		wantOut string
	}{
		{"a server that reads novelfull through the browser, an empty environment", word.BrowserSites{word.Novelfull: true}, nil,
			false, "Browser Sites as the server started with them: novelfull."},
		{"a server with no browser Site, this environment naming novelfull", word.BrowserSites{},
			map[string]string{"BROWSER_SITES": "novelfull"}, true, "Browser Sites as the server started with them: none."},
		{"the default pair, an empty environment", word.BrowserSites{word.Comix: true, word.Kagane: true}, nil,
			true, "Browser Sites as the server started with them: comix,kagane."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := noticesDB(t, true, false)
			ctx := context.Background()
			s, err := store.Open(ctx, url, store.Pools{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// What serve does at start: build its notifiers, record its settings.
			deps := handlers.Deps{BrowserSites: tc.server}
			cfg := server.Config{BrowserSites: tc.server, DiscordWebhookURL: word.Secret(hookURL)}
			if _, err := server.OwnerNotices(ctx, cfg, server.Options{}, s, slog.New(slog.DiscardHandler), &deps); err != nil {
				t.Fatal(err)
			}
			server, err := deps.Notices.(*notify.Notifier).Status(ctx, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"DATABASE_URL": url}
			maps.Copy(env, tc.env)
			var stdout, stderr bytes.Buffer
			if err := runNotices(ctx, []string{"--json"}, strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] }); err != nil {
				t.Fatalf("exit: %v\n%s", err, stdout.String())
			}
			var got struct {
				BrowserSites []string `json:"browser_sites"`
				Recorded     bool     `json:"browser_sites_recorded"`
				Notices      []struct {
					Condition, Site string
					Holds           bool
				}
			}
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if !got.Recorded || !slices.Equal(got.BrowserSites, deps.BrowserSites.Names()) {
				t.Errorf("browser Sites %v (recorded %v), the server's %v", got.BrowserSites, got.Recorded, deps.BrowserSites.Names())
			}
			for i, nt := range got.Notices {
				if nt.Condition == "no-browser-route" && nt.Holds != tc.holds {
					t.Errorf("novelfull's no-browser-route holds %v, want %v", nt.Holds, tc.holds)
				}
				if i >= len(server.Notices) || nt.Holds != server.Notices[i].Holds || nt.Condition != string(server.Notices[i].Kind) {
					t.Errorf("notice %d: %+v, the server reads %+v", i, nt, server.Notices)
				}
			}
			stdout.Reset()
			if err := runNotices(ctx, nil, strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] }); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stdout.String(), tc.wantOut) {
				t.Errorf("text lacks %q:\n%s", tc.wantOut, stdout.String())
			}
		})
	}
}

// A row recorded by a server older than migration 0012 carries no browser
// Sites: the command says it assumes the default, as an unset BROWSER_SITES.
func TestTheNoticesCommandSaysWhenTheServerRecordedNoBrowserSites(t *testing.T) {
	t.Parallel()
	url := noticesDB(t, true, false)
	ctx := context.Background()
	s, err := store.Open(ctx, url, store.Pools{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.Insert(t, s.Pool(), storetest.Webhook{RecordedAt: storetest.Milli(1)})
	var stdout, stderr bytes.Buffer
	env := map[string]string{"DATABASE_URL": url, "BROWSER_SITES": "novelfull"}
	if err := runNotices(ctx, nil, strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "has not recorded its BROWSER_SITES yet") || !strings.Contains(stdout.String(), "comix,kagane") {
		t.Errorf("output:\n%s", stdout.String())
	}
}

// A Reader channel whose announcement has failed and gone unsent for over
// twelve hours is listed; a younger failure is not yet.
func TestTheNoticesCommandListsAReaderChannelFailingForTwelveHours(t *testing.T) {
	t.Parallel()
	url := noticesDB(t, true, false)
	ctx := context.Background()
	s, err := store.Open(ctx, url, store.Pools{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.Insert(t, s.Pool(), storetest.Webhook{RecordedAt: storetest.Milli(1)})
	now := time.Now()
	storetest.Insert(t, s.Pool(), storetest.Reader{ID: "111", Name: "Ada"})
	storetest.Insert(t, s.Pool(), storetest.Series{Site: "comix", ID: "s1", URL: "https://comix.to/title/s1"})
	storetest.Insert(t, s.Pool(), storetest.Arrival{Site: "comix", Series: "s1", Chapter: "101", ConfirmedAt: now.Add(-13 * time.Hour)})
	for _, r := range []struct {
		channel, chapter string
		age              time.Duration
	}{{"discord", "101", 13 * time.Hour}, {"push", "101", time.Hour}} {
		if _, err := s.Pool().Exec(ctx, `INSERT INTO announcements (reader_id, channel, site, series_id, chapter_num, arrival_id, created_at, failed_at, attempts, last_error)
			SELECT '111', $1, 'comix', 's1', $2::numeric, id, $3, $3, 1, 'status 500' FROM chapter_arrivals`,
			r.channel, r.chapter, now.Add(-r.age)); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	env := map[string]string{"DATABASE_URL": url}
	_ = runNotices(ctx, nil, strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
	out := stdout.String()
	if !strings.Contains(out, "Reader channel discord is failing") {
		t.Errorf("the failing Discord channel is not listed:\n%s", out)
	}
	if strings.Contains(out, "Reader channel push") {
		t.Errorf("a channel failing for an hour is listed:\n%s", out)
	}
}

// The command and /admin read a condition's age on one clock, the
// server's: under the demo's clock, 26 hours ahead, asurascans' stall of 13
// hours reads 13 hours in both (issue 23: 13 against 39); and the command
// prints its start in the owner's zone (TIME_ZONE), as the pages do.
func TestTheNoticesCommandReadsAgesOnTheServersClockAndZoneAsAdminDoes(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t)
	ctx := context.Background()
	s, err := store.Open(ctx, url, store.Pools{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ahead := 26 * time.Hour
	clock := func() time.Time { return time.Now().Add(ahead) }
	demoNow := clock()
	for h := 13; h >= 0; h-- {
		storetest.Insert(t, s.Pool(), storetest.Pass{Site: word.Asurascans, StartedAt: demoNow.Add(-time.Duration(h)*time.Hour - time.Minute), Due: 3})
	}
	if err := s.OpenNotice(ctx, word.Stall, "asurascans"); err != nil {
		t.Fatal(err)
	}
	berlin, err := word.ParseZone("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	deps := handlers.Deps{BrowserSites: word.BrowserSites{}}
	cfg := server.Config{BrowserSites: word.BrowserSites{}, DiscordWebhookURL: word.Secret(hookURL), TimeZone: berlin}
	if _, err := server.OwnerNotices(ctx, cfg, server.Options{Now: clock}, s, slog.New(slog.DiscardHandler), &deps); err != nil {
		t.Fatal(err)
	}
	// What /admin's verdict says: the conditions at the server's now.
	at := clock()
	v, err := deps.Notices.(*notify.Notifier).Status(ctx, at)
	if err != nil || len(v.Notices) != 1 || !v.Notices[0].Holds {
		t.Fatalf("the server reads %+v (%v)", v.Notices, err)
	}
	admin := word.Age(at.Sub(v.Notices[0].Since))
	if admin != "13 hours" {
		t.Fatalf("/admin reads %q", admin)
	}
	var stdout, stderr bytes.Buffer
	env := map[string]string{"DATABASE_URL": url}
	_ = runNotices(ctx, nil, strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
	if !strings.Contains(stdout.String(), "("+admin+")") {
		t.Errorf("the command does not read %q as /admin does:\n%s", admin, stdout.String())
	}
	// And it prints the moment as the pages do, in the owner's zone.
	if since := "since " + word.When(v.Notices[0].Since, berlin) + " ("; !strings.Contains(stdout.String(), since) {
		t.Errorf("the command does not print %q:\n%s", since, stdout.String())
	}
	// The demo's clock skips again: the command follows what it records.
	ahead += 13 * time.Hour
	if err := s.RecordServerClock(ctx, ahead); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	_ = runNotices(ctx, nil, strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
	if !strings.Contains(stdout.String(), "(26 hours)") {
		t.Errorf("after a skip of 13 hours the command reads:\n%s", stdout.String())
	}
}

// Sent with no answer is neither sent nor pending: the command says such a
// message may not have arrived, for Readers' announcements and the owner's
// notices alike, and does not fail for it (nothing will send it again).
func TestTheNoticesCommandSaysWhatMayNotHaveArrived(t *testing.T) {
	t.Parallel()
	url := noticesDB(t, true, false)
	ctx := context.Background()
	s, err := store.Open(ctx, url, store.Pools{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.Insert(t, s.Pool(), storetest.Webhook{RecordedAt: storetest.Milli(1)})
	now := time.Now()
	storetest.Insert(t, s.Pool(), storetest.Reader{ID: "111", Name: "Ada"}, storetest.Reader{ID: "222", Name: "Bo"})
	storetest.Insert(t, s.Pool(), storetest.Series{Site: "comix", ID: "s1", URL: "https://comix.to/title/s1"})
	storetest.Insert(t, s.Pool(), storetest.Arrival{Site: "comix", Series: "s1", Chapter: "101", ConfirmedAt: now.Add(-time.Hour)})
	if _, err := s.Pool().Exec(ctx, `INSERT INTO announcements (reader_id, channel, site, series_id, chapter_num, arrival_id, created_at, sent_at, sent_unknown, attempts, last_error)
		SELECT r, 'discord', 'comix', 's1', 101, id, $1, $1, true, 1, 'no answer' FROM chapter_arrivals, (VALUES ('111'), ('222')) AS v(r)`,
		now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	// The stall notice was delivered in noticesDB; novelfull's next one
	// goes and gets no answer.
	if _, err := s.Pool().Exec(ctx, `UPDATE owner_notices SET notified_at = NULL WHERE site = 'novelfull'`); err != nil {
		t.Fatal(err)
	}
	if err := deliver(ctx, s, "no-browser-route", "novelfull", store.Delivery{SentAt: now.Add(-time.Hour), Unknown: true,
		Err: "Post webhook: context deadline exceeded (timed out)"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": url}
	var stdout, stderr bytes.Buffer
	if err := runNotices(ctx, nil, strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] }); err != nil {
		t.Errorf("the command fails over a message that was sent: %v", err)
	}
	out := stdout.String()
	if !strings.Contains(out, "Reader channel discord: 2 announcement(s) in the last 24 h may not have arrived") {
		t.Errorf("the Readers' announcements sent with no answer are not counted:\n%s", out)
	}
	if !strings.Contains(out, "may not have arrived: no answer came (Post webhook: context deadline exceeded (timed out))") {
		t.Errorf("the owner notice sent with no answer is not named:\n%s", out)
	}
	stdout.Reset()
	_ = runNotices(ctx, []string{"--json"}, strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
	var got struct {
		Notices []struct {
			Site              string `json:"site"`
			MayNotHaveArrived bool   `json:"may_not_have_arrived"`
		} `json:"notices"`
		Unknown []struct {
			Channel string `json:"channel"`
			Count   int    `json:"count"`
		} `json:"reader_announcements_may_not_have_arrived"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Unknown) != 1 || got.Unknown[0].Channel != "discord" || got.Unknown[0].Count != 2 {
		t.Errorf("json counts %+v", got.Unknown)
	}
	for _, n := range got.Notices {
		if n.MayNotHaveArrived != (n.Site == "novelfull") {
			t.Errorf("json notice %+v", n)
		}
	}
}
