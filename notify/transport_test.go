package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/internal/citest"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// One embed per notice, and nothing in it but what CONTEXT.md names (Owner
// notice; Rules: Owner colours): one sentence, the kind as footer, no mentions.
func TestTheEmbedPayloadHasOnlyItsSixFieldsAndMentionsNobody(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, site, title, link, footer, age string
		browser                              []string
		setup                                func(h *harness)
	}{
		{
			name: "stall", site: "asurascans", title: "asurascans", footer: "stall", age: "13 hours",
			link:  "https://books.example.org/admin/lanes",
			setup: func(h *harness) { h.run("asurascans", 0, 13, stallPass) },
		},
		{
			name: "no-browser-route", site: "novelfull", title: "novelfull", footer: "no-browser-route", age: "13 hours",
			link:  "https://books.example.org/admin/lanes",
			setup: func(h *harness) { h.run("novelfull", 0, 13, refusingPass) },
		},
		{
			name: "sidecar-down", site: "kagane", title: "browser sidecar", footer: "sidecar-down", age: "13 hours",
			browser: []string{"comix", "kagane"},
			link:    "https://books.example.org/admin/lanes",
			setup:   func(h *harness) { h.run("kagane", 0, 13, noBrowserPass) },
		},
		{
			name: "adapter-broken", site: "demonicscans", title: "demonicscans", footer: "adapter-broken", age: "12 hours",
			link: "https://books.example.org/admin/series?filter=yields-no-chapter&site=demonicscans",
			setup: func(h *harness) {
				h.series("demonicscans", 3)
				h.failing("demonicscans", 2, "no_chapter", hours(0.5))
				h.run("demonicscans", 0, 13, healthyPass)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config{browser: tc.browser})
			tc.setup(h)
			h.pass(tc.site, hours(13), idlePassFor(tc.name))
			if _, acc := h.sink.counts(); acc != 1 {
				t.Fatalf("%d messages, want 1", acc)
			}
			var top map[string]json.RawMessage
			if err := json.Unmarshal(h.sink.accepted[0], &top); err != nil {
				t.Fatal(err)
			}
			if keys := slices.Sorted(maps.Keys(top)); !slices.Equal(keys, []string{"allowed_mentions", "embeds"}) {
				t.Fatalf("top-level keys %v", keys)
			}
			if got := string(top["allowed_mentions"]); got != `{"parse":[]}` {
				t.Fatalf("allowed_mentions %s, want {\"parse\":[]}", got)
			}
			var embeds []map[string]any
			if err := json.Unmarshal(top["embeds"], &embeds); err != nil || len(embeds) != 1 {
				t.Fatalf("embeds: %s", top["embeds"])
			}
			e := embeds[0]
			if keys := slices.Sorted(maps.Keys(e)); !slices.Equal(keys,
				[]string{"color", "description", "footer", "timestamp", "title", "url"}) {
				t.Fatalf("embed keys %v: no fields, thumbnail, author or anything else", keys)
			}
			if e["color"] != float64(13589581) {
				t.Errorf("color %v", e["color"])
			}
			if e["title"] != tc.title || e["url"] != tc.link {
				t.Errorf("title %q url %q, want %q %q", e["title"], e["url"], tc.title, tc.link)
			}
			if e["timestamp"] != "2026-11-01T13:00:00Z" {
				t.Errorf("timestamp %v, want the pass time", e["timestamp"])
			}
			if f, _ := e["footer"].(map[string]any); len(f) != 1 || f["text"] != tc.footer {
				t.Errorf("footer %v, want only the word %q", e["footer"], tc.footer)
			}
			d, _ := e["description"].(string)
			if !strings.Contains(d, "for "+tc.age+";") || strings.Count(d, ".") != 1 || !strings.HasSuffix(d, ".") ||
				strings.Contains(d, "\n") {
				t.Errorf("description %q: want one sentence stating the age %q and a repair", d, tc.age)
			}
		})
	}
}

// idlePassFor is the pass that triggers the message in the payload test: one
// more pass of the kind the condition is made of.
func idlePassFor(kind string) pass {
	switch kind {
	case "stall":
		return stallPass
	case "no-browser-route":
		return refusingPass
	case "sidecar-down":
		return noBrowserPass
	}
	return healthyPass
}

func TestDiscordsAnswerDecidesWhatTheNextPassDoes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		status      int
		sent        bool   // notified_at set
		reason      string // pending reason
		gaveUp      bool
		nextRequest bool // the next pass posts again
	}{
		{name: "204 is delivered", status: 204, sent: true},
		{name: "200 is delivered", status: 200, sent: true},
		{name: "500 is retried on the next pass", status: 500, reason: "Discord answered 500", nextRequest: true},
		{name: "503 is retried on the next pass", status: 503, reason: "Discord answered 503", nextRequest: true},
		{name: "404 is a dead webhook and stops sending", status: 404,
			reason: "webhook is dead (Discord answered 404 Unknown Webhook); change DISCORD_WEBHOOK_URL"},
		{name: "400 is tried again an hour on", status: 400, reason: "Discord answered 400", gaveUp: true, nextRequest: true},
		{name: "401 is tried again an hour on", status: 401, reason: "Discord answered 401", gaveUp: true, nextRequest: true},
		{name: "a redirect is not followed, and tried again an hour on", status: 302, reason: "Discord answered 302", gaveUp: true, nextRequest: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config{reply: func(n int, w http.ResponseWriter, _ *http.Request) bool {
				if n > 1 { // only the first answer is under test
					w.WriteHeader(http.StatusNoContent)
					return true
				}
				if tc.status == 302 {
					w.Header().Set("Location", "/elsewhere")
				}
				w.WriteHeader(tc.status)
				return tc.status < 300
			}})
			h.run("asurascans", 0, 14, stallPass)
			n, ok := h.notice(word.Stall, "asurascans")
			if !ok || (!n.NotifiedAt.IsZero()) != tc.sent || n.LastError != tc.reason || n.GaveUp != tc.gaveUp {
				t.Fatalf("after %d: %+v; want sent=%v reason=%q gaveUp=%v", tc.status, n, tc.sent, tc.reason, tc.gaveUp)
			}
			h.pass("asurascans", hours(14), stallPass)
			if req, _ := h.sink.counts(); (req == 2) != tc.nextRequest {
				t.Fatalf("%d requests after the next pass; want a retry: %v", req, tc.nextRequest)
			}
		})
	}
}

func TestA429IsRetriedOnlyAfterItsRetryAfter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		body   string
		header string
		wait   time.Duration
	}{
		{name: "from Discord's JSON body", body: `{"message":"You are being rate limited.","retry_after":90.5,"global":false}`, wait: 90500 * time.Millisecond},
		{name: "from the Retry-After header", header: "120", wait: 120 * time.Second},
		{name: "the longer of the two", body: `{"retry_after":30}`, header: "45", wait: 45 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config{reply: func(n int, w http.ResponseWriter, _ *http.Request) bool {
				if n > 1 {
					w.WriteHeader(http.StatusNoContent)
					return true
				}
				if tc.header != "" {
					w.Header().Set("Retry-After", tc.header)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				fmt.Fprint(w, tc.body)
				return false
			}})
			h.run("asurascans", 0, 13, stallPass)
			at := hours(12.5)
			h.pass("asurascans", at, stallPass) // 12.5 h: posts, meets the 429
			n, _ := h.notice(word.Stall, "asurascans")
			if !n.NotifiedAt.IsZero() || !n.RetryNotBefore.Equal(at.Add(tc.wait)) {
				t.Fatalf("after the 429: %+v; want unsent, no attempt before +%s", n, tc.wait)
			}
			// Another Lane's pass inside the wait: no request.
			h.pass("asurascans", at.Add(tc.wait-time.Second), stallPass)
			if req, _ := h.sink.counts(); req != 1 {
				t.Fatalf("%d requests inside the retry_after; want 1", req)
			}
			h.pass("asurascans", at.Add(tc.wait), stallPass)
			n, _ = h.notice(word.Stall, "asurascans")
			if req, acc := h.sink.counts(); req != 2 || acc != 1 || n.NotifiedAt.IsZero() {
				t.Fatalf("after the wait: %d requests, %d accepted, %+v", req, acc, n)
			}
		})
	}
}

func TestADeadWebhookStopsEverySendUntilTheSettingChanges(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config{reply: func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message": "Unknown Webhook", "code": 10015}`)
		return false
	}})
	h.run("asurascans", 0, 20, stallPass)
	h.run("novelfull", 0, 20, refusingPass)
	if req, _ := h.sink.counts(); req != 1 {
		t.Fatalf("%d requests; want the one that learned the webhook is dead", req)
	}
	st, err := h.n.Status(context.Background(), hours(20))
	if err != nil {
		t.Fatal(err)
	}
	if !st.WebhookDeadAt.Equal(hours(13)) || len(st.Notices) != 2 {
		t.Fatalf("status: %+v; want dead since 13h and two pending notices", st)
	}
	for _, nt := range st.Notices {
		if !nt.Pending() || !strings.Contains(nt.LastError, "webhook is dead") {
			t.Fatalf("notice %+v: want pending because the webhook is dead", nt)
		}
	}
	if c := strings.Count(h.logs.String(), "owner notices stopped"); c != 1 {
		t.Fatalf("the dead webhook was logged %d times; want once:\n%s", c, h.logs)
	}

	// A second process on the same setting stays quiet too.
	same := h.notifier(h.sink.url(), config{})
	if err := same.Check(context.Background(), "asurascans", hours(20)); err != nil {
		t.Fatal(err)
	}
	if req, _ := h.sink.counts(); req != 1 {
		t.Fatalf("%d requests from a second process; want none", req)
	}

	// A new address is a new setting: the pending notices go out.
	fresh := newSink(t, nil)
	changed := h.notifier(fresh.url(), config{}) // another server: another address
	for _, site := range []string{"asurascans", "novelfull"} {
		if err := changed.Check(context.Background(), site, hours(21)); err != nil {
			t.Fatal(err)
		}
	}
	if _, acc := fresh.counts(); acc != 2 {
		t.Fatalf("%d messages to the new webhook; want both pending notices", acc)
	}
}

// A POST Discord read whole and never answered may have arrived: the notice
// counts as sent, marked as maybe not arrived, and is never posted again
// (docs/adr/0005).
func TestASinkThatHangsAfterTheMessageWentIsNeverAskedAgain(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	h := newHarness(t, config{timeout: 200 * time.Millisecond, reply: func(int, http.ResponseWriter, *http.Request) bool {
		<-release
		return false
	}})
	t.Cleanup(func() { close(release) }) // before the sink's Close
	h.run("asurascans", 0, 13, stallPass)
	start := time.Now()
	h.pass("asurascans", hours(13), stallPass)
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("the pass waited %s; the client timeout is 200ms", el)
	}
	n, _ := h.notice(word.Stall, "asurascans")
	if n.NotifiedAt.IsZero() || !n.SentUnknown {
		t.Fatalf("after the timeout: %+v; want counted as sent, marked as maybe not arrived", n)
	}
	h.run("asurascans", 14, 17, stallPass)
	if req, _ := h.sink.counts(); req != 1 {
		t.Fatalf("%d POSTs reached the webhook across four passes; want 1", req)
	}
	if logs := h.logs.String(); !strings.Contains(logs, "may not have arrived") || strings.Contains(logs, marker) {
		t.Fatalf("the log does not say the notice may not have arrived, or names the address:\n%s", logs)
	}
}

// A POST that never left (the dial refused) sent nothing: the notice stays
// pending and the next pass tries again.
func TestASinkThatRefusesTheConnectionLeavesTheNoticePending(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config{})
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	h.n = h.notifier(word.Secret(closed.URL+"/api/webhooks/1234567890/"+marker), config{})
	h.run("asurascans", 0, 14, stallPass)
	n, _ := h.notice(word.Stall, "asurascans")
	if !n.NotifiedAt.IsZero() || n.SentUnknown || n.Attempts != 1 || strings.Contains(n.LastError, marker) {
		t.Fatalf("after a refused dial: %+v; want pending, one attempt, no address", n)
	}
	h.n = h.notifier(h.sink.url(), config{})
	h.pass("asurascans", hours(14), stallPass)
	if n, _ := h.notice(word.Stall, "asurascans"); n.NotifiedAt.IsZero() || n.SentUnknown {
		t.Fatalf("the next pass did not retry: %+v", n)
	}
}

func TestTheWebhookAddressNeverReachesAnErrorALogLineOrTheDatabase(t *testing.T) {
	t.Parallel()
	replies := map[string]func(int, http.ResponseWriter, *http.Request) bool{
		"500": func(_ int, w http.ResponseWriter, _ *http.Request) bool { w.WriteHeader(500); return false },
		"400": func(_ int, w http.ResponseWriter, _ *http.Request) bool { w.WriteHeader(400); return false },
		"404": func(_ int, w http.ResponseWriter, _ *http.Request) bool { w.WriteHeader(404); return false },
		"hang": func(_ int, _ http.ResponseWriter, r *http.Request) bool {
			<-r.Context().Done()
			return false
		},
		"closed": nil,
	}
	for name, reply := range replies {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config{reply: reply, timeout: 150 * time.Millisecond})
			if name == "closed" {
				h.sink.srv.Close() // connection refused: Go's error quotes the URL
			}
			h.run("asurascans", 0, 15, stallPass)
			st, err := h.n.Status(context.Background(), hours(15))
			if err != nil {
				t.Fatal(err)
			}
			var dump strings.Builder
			opts := notify.Options{WebhookURL: h.sink.url()}
			fmt.Fprintf(&dump, "%v %+v %#v %s %v %+v %#v %q", st, st, h.n, h.sink.url(), opts, opts, opts, h.sink.url())
			slog.New(slog.NewTextHandler(&dump, nil)).Info("config", "webhook", h.sink.url(), "options", opts)
			b, _ := json.Marshal(struct{ URL word.Secret }{h.sink.url()})
			dump.Write(b)
			var raw strings.Builder
			rows, err := h.st.Pool().Query(context.Background(), `SELECT to_jsonb(a)::text FROM owner_notice_attempts a
				UNION ALL SELECT to_jsonb(d)::text FROM dead_webhooks d`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s string
				_ = rows.Scan(&s)
				raw.WriteString(s)
			}
			for what, text := range map[string]string{"log": h.logs.String(), "status": dump.String(), "database": raw.String()} {
				if strings.Contains(text, marker) || strings.Contains(text, "1234567890") {
					t.Errorf("the webhook address reached the %s:\n%s", what, text)
				}
			}
			if st.Notices[0].LastError == "" {
				t.Fatalf("no reason recorded: %+v", st.Notices[0])
			}
		})
	}
	for _, bad := range []string{
		"http://discord.example/api/webhooks/1/" + marker,
		"::" + marker,
		"https://user:" + marker + "@discord.example/api/webhooks/1/x",
	} {
		if err := notify.ValidateWebhookURL(word.Secret(bad)); err == nil || strings.Contains(err.Error(), marker) {
			t.Errorf("validating a bad address: %v", err)
		}
	}
}

func TestTheWebhookAddressMustBeHTTPSOrALoopbackSink(t *testing.T) {
	t.Parallel()
	cases := []struct {
		url string
		ok  bool
	}{
		{"https://discord.com/api/webhooks/1/token", true},
		{"http://127.0.0.1:8080/hook", true},
		{"http://localhost/hook", true},
		{"http://[::1]:9/hook", true},
		{"http://discord.com/api/webhooks/1/token", false},
		{"http://127.0.0.1.example.org/hook", false},
		{"ftp://discord.com/x", false},
		{"/api/webhooks/1/token", false},
		{"discord.com/api/webhooks/1/token", false},
		{"https://user:pw@discord.com/api/webhooks/1/token", false},
		{"https://", false},
	}
	for _, tc := range cases {
		if err := notify.ValidateWebhookURL(word.Secret(tc.url)); (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok=%v", tc.url, err, tc.ok)
		}
	}
}

func TestAnUnsetWebhookTurnsThePushOffAndSaysSoOnce(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	logs := &logBuffer{}
	n, err := notify.New(notify.Options{Store: st, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if n.Enabled() || n.Hook() != nil {
		t.Fatal("the push is on without a webhook; Poller.Notifier must be nil")
	}
	if c := strings.Count(logs.String(), "owner notices off"); c != 1 {
		t.Fatalf("logged %d times; want once at start:\n%s", c, logs)
	}
	h := &harness{t: t, st: st, n: n}
	h.run("asurascans", 0, 20, stallPass)
	if all, _ := st.Notices(context.Background()); len(all) != 0 {
		t.Fatalf("notices opened with the push off: %+v", all)
	}
	got, err := n.Conditions(context.Background(), hours(20))
	if err != nil || len(got) != 1 || got[0].Kind != word.Stall {
		t.Fatalf("the verdict line still reads the conditions: %+v %v", got, err)
	}
}

func TestNotifyImportsNothingAboutSigningIn(t *testing.T) {
	t.Parallel()
	gobin, err := exec.LookPath("go")
	if err != nil {
		citest.Skip(t, "no go command: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", "-json", "github.com/mangabookmark/mangabookmark/notify").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{
		"github.com/gorilla/sessions", "github.com/gorilla/securecookie", "golang.org/x/oauth2",
		"github.com/mangabookmark/mangabookmark/handlers", "github.com/mangabookmark/mangabookmark/auth",
		"github.com/mangabookmark/mangabookmark/session",
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p struct{ ImportPath string }
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		seen++
		for _, f := range forbidden {
			if p.ImportPath == f || strings.HasPrefix(p.ImportPath, f+"/") {
				t.Errorf("notify depends on %s", p.ImportPath)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("only %d packages listed; the check saw nothing", seen)
	}
}

func TestARefusedMessageWaitsAnHourAndAFixedSettingDeliversItInTheSameEpisode(t *testing.T) {
	t.Parallel()
	// Discord answers 401 for a webhook address with a wrong token. The
	// owner fixes the setting while the stall goes on: the episode must
	// still reach them, not wait for the condition to lift and return.
	h := newHarness(t, config{reply: func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message": "Invalid Webhook Token", "code": 50027}`)
		return false
	}})
	h.run("asurascans", 0, 14, stallPass) // refused at 13 h
	h.pass("asurascans", hours(13.5), stallPass)
	if req, _ := h.sink.counts(); req != 1 {
		t.Fatalf("%d requests within the hour after a refusal; want 1", req)
	}
	n, _ := h.notice(word.Stall, "asurascans")
	if !n.NotifiedAt.IsZero() || !n.GaveUp || !n.RetryNotBefore.Equal(hours(14)) {
		t.Fatalf("after the 401: %+v; want pending, refused, next attempt at 14 h", n)
	}
	fixed := newSink(t, nil)
	h.n = h.notifier(fixed.url(), config{}) // the owner's new setting, deployed
	h.run("asurascans", 14, 20, stallPass)
	if _, acc := fixed.counts(); acc != 1 {
		t.Fatalf("%d messages through the fixed setting; want the episode's one", acc)
	}
	if req, _ := h.sink.counts(); req != 1 {
		t.Fatalf("%d requests to the old address; want no more", req)
	}
}
