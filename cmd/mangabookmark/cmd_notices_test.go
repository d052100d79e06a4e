package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/store/word"
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
		at := now.Add(-time.Duration(h) * time.Hour).UnixMilli()
		if _, err := s.Pool().Exec(ctx, `INSERT INTO poll_passes (site, started_at, finished_at, due) VALUES ('asurascans', $1, $1, 3)`, at); err != nil {
			t.Fatal(err)
		}
		if h <= 15 {
			if _, err := s.Pool().Exec(ctx, `INSERT INTO poll_passes (site, started_at, finished_at, skip) VALUES ('novelfull', $1, $1, 'refusing')`, at); err != nil {
				t.Fatal(err)
			}
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
	cases := []struct {
		name        string
		sent        bool
		failed      bool
		args        []string
		env         map[string]string
		wantErr     string
		wantOut     []string
		emptyDB     bool
		deadWebhook bool
	}{
		{
			name: "no open notice is a clean exit", emptyDB: true,
			env:     map[string]string{"DISCORD_WEBHOOK_URL": hookURL},
			wantOut: []string{"Owner notices are on.", "No open owner notices."},
		},
		{
			name: "sent notices are listed with their age and send time", sent: true,
			env: map[string]string{"DISCORD_WEBHOOK_URL": hookURL},
			wantOut: []string{
				"stall", "asurascans", "(20 hours)", "sent at ",
				"no-browser-route", "novelfull", "(15 hours)",
			},
		},
		{
			name: "a pending notice says why and fails the exit", failed: true,
			env: map[string]string{"DISCORD_WEBHOOK_URL": hookURL},
			wantOut: []string{
				"pending — last attempt failed: Discord answered 500 (1 attempt(s), last at ",
				"pending — not attempted yet",
			},
			wantErr: "2 owner notice(s) pending",
		},
		{
			name: "a dead webhook is shown until the setting changes", sent: true, deadWebhook: true,
			env:     map[string]string{"DISCORD_WEBHOOK_URL": hookURL},
			wantOut: []string{"The Discord webhook is dead: Discord answered 404 at "},
			wantErr: "webhook is dead",
		},
		{
			name: "the push off is said plainly", emptyDB: true,
			wantOut: []string{"Owner notices are off: DISCORD_WEBHOOK_URL is unset."},
		},
		{
			name: "an unusable webhook setting fails the exit without printing it", failed: true,
			env:     map[string]string{"DISCORD_WEBHOOK_URL": "http://discord.example/api/webhooks/42/NOTICES-SECRET-MARKER"},
			wantOut: []string{"Owner notices cannot be sent: DISCORD_WEBHOOK_URL is not a usable address."},
			wantErr: "not a usable address",
		},
		{
			name: "notices left from when the push was on do not fail the exit once it is off", failed: true,
			wantOut: []string{"Owner notices are off", "not sent — owner notices are off"},
		},
		{
			name: "json for scripts, still failing while pending", failed: true, args: []string{"--json"},
			env:     map[string]string{"DISCORD_WEBHOOK_URL": hookURL},
			wantOut: []string{`"condition": "no-browser-route"`, `"last_error": "Discord answered 500"`, `"pending": true`},
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
			if tc.deadWebhook {
				s, err := store.Open(context.Background(), url, store.Pools{})
				if err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256([]byte(hookURL))
				if err := s.MarkWebhookDead(context.Background(), hex.EncodeToString(sum[:]), time.Now()); err != nil {
					t.Fatal(err)
				}
				s.Close()
			}
			env := map[string]string{"DATABASE_URL": url}
			for k, v := range tc.env {
				env[k] = v
			}
			var stdout, stderr bytes.Buffer
			err := runNotices(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr,
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
	if _, err := s.ClaimNotice(ctx, kind, site, "test", msT(1), msT(math.MaxInt64)); err != nil {
		return err
	}
	return s.RecordDelivery(ctx, kind, site, "test", d)
}
