package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// marker is the secret part of every test webhook address; it must never
// reach an error, a log line or the database.
const marker = "SECRET-MARKER-7f3a9c0d"

// t0 is an arbitrary pass-log epoch; the clock is the pass time.
var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func hours(h float64) time.Time { return t0.Add(time.Duration(h * float64(time.Hour))) }

// sink is a Discord webhook stand-in on a real loopback server.
type sink struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests int
	accepted [][]byte
	reply    func(n int, w http.ResponseWriter, r *http.Request) bool // true: accepted
}

// accept answers 204 like Discord does without ?wait=true.
func accept(_ int, w http.ResponseWriter, _ *http.Request) bool {
	w.WriteHeader(http.StatusNoContent)
	return true
}

func newSink(t *testing.T, reply func(n int, w http.ResponseWriter, r *http.Request) bool) *sink {
	t.Helper()
	if reply == nil {
		reply = accept
	}
	s := &sink{reply: reply}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, marker) ||
			r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("sink: unexpected request %s %s (%s)", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		s.mu.Lock()
		s.requests++
		n := s.requests
		s.mu.Unlock()
		if s.reply(n, w, r) {
			s.mu.Lock()
			s.accepted = append(s.accepted, body)
			s.mu.Unlock()
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) url() word.Secret {
	return word.Secret(s.srv.URL + "/api/webhooks/1234567890/" + marker)
}

func (s *sink) counts() (requests, accepted int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, len(s.accepted)
}

// footers lists the condition words of the accepted messages, in order.
func (s *sink) footers(t *testing.T) []string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, b := range s.accepted {
		var p struct {
			Embeds []struct {
				Title  string `json:"title"`
				Footer struct {
					Text string `json:"text"`
				} `json:"footer"`
			} `json:"embeds"`
		}
		if err := json.Unmarshal(b, &p); err != nil || len(p.Embeds) != 1 {
			t.Fatalf("sink: not one embed: %s", b)
		}
		out = append(out, p.Embeds[0].Footer.Text+" "+p.Embeds[0].Title)
	}
	return out
}

// logBuffer collects every log line at every level.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harness is one database, one sink and one Notifier.
type harness struct {
	t    *testing.T
	st   *store.Store
	sink *sink
	n    *notify.Notifier
	logs *logBuffer
}

type config struct {
	browser []string
	reply   func(n int, w http.ResponseWriter, r *http.Request) bool
	timeout time.Duration
}

func newHarness(t *testing.T, c config) *harness {
	t.Helper()
	h := &harness{t: t, st: storetest.New(t), sink: newSink(t, c.reply), logs: &logBuffer{}}
	h.n = h.notifier(h.sink.url(), c)
	return h
}

func (h *harness) notifier(webhook word.Secret, c config) *notify.Notifier {
	h.t.Helper()
	browser := word.BrowserSites{}
	for _, s := range c.browser {
		browser[word.Site(s)] = true
	}
	timeout := c.timeout
	if timeout == 0 {
		timeout = 2 * time.Second
	}
	n, err := notify.New(notify.Options{
		Store:         h.st,
		WebhookURL:    webhook,
		PublicBaseURL: "https://books.example.org",
		BrowserSites:  browser,
		HTTPClient:    &http.Client{Timeout: timeout},
		Logger:        slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		h.t.Fatalf("notify.New: %v", err)
	}
	return n
}

// pass is one pass-log row's counts.
type pass struct {
	due, checked                                                     int
	skip                                                             string
	refused, ok, noChapter, unfetchable, notFound, errs, unreachable int
}

var (
	stallPass       = pass{due: 3}
	refusedPass     = pass{due: 3, refused: 2} // two refusals broke the loop
	refusingPass    = pass{skip: "refusing"}
	healthyPass     = pass{due: 3, checked: 3, ok: 3}
	idlePass        = pass{} // nothing due
	pausedPass      = pass{skip: "paused"}
	browserDownPass = pass{skip: "browser-down"}
	noBrowserPass   = pass{skip: "no-browser"}
	unreachablePass = pass{due: 2, unreachable: 2}
)

// insertPass writes one pass-log row as the poller would.
func (h *harness) insertPass(site string, at time.Time, p pass) {
	h.t.Helper()
	storetest.Insert(h.t, h.st.Pool(), storetest.Pass{Site: word.Site(site), StartedAt: at, FinishedAt: at.Add(time.Second),
		Due: p.due, Checked: p.checked, Skip: word.Skip(p.skip), Counts: word.Counts{Refused: p.refused, OK: p.ok,
			NoChapter: p.noChapter, Unfetchable: p.unfetchable, NotFound: p.notFound, Errors: p.errs, Unreachable: p.unreachable}})
}

// pass inserts the pass-log row and runs the deferred call, as a Lane does.
func (h *harness) pass(site string, at time.Time, p pass) {
	h.t.Helper()
	h.insertPass(site, at, p)
	if err := h.n.Check(context.Background(), site, at); err != nil {
		h.t.Fatalf("check %s at %s: %v", site, at, err)
	}
}

// run makes one pass per hour of p on site for hours [from, to).
func (h *harness) run(site string, from, to float64, p pass) {
	h.t.Helper()
	for x := from; x < to; x++ {
		h.pass(site, hours(x), p)
	}
}

// series adds n pollable Series to site, named s0..s(n-1).
func (h *harness) series(site string, n int) {
	h.t.Helper()
	for i := range n {
		id := "s" + string(rune('0'+i))
		if err := h.st.CreateSeries(context.Background(), store.Series{
			Site: site, SeriesID: id, URL: "https://" + site + ".example/series/" + id, Kind: "manga",
		}, storetest.Milli(1)); err != nil {
			h.t.Fatal(err)
		}
	}
}

// failing gives the first n of site's Series a failure row.
func (h *harness) failing(site string, n int, outcome string, since time.Time) {
	h.t.Helper()
	for i := range n {
		id := "s" + string(rune('0'+i))
		storetest.Insert(h.t, h.st.Pool(), storetest.Failure{Site: word.Site(site), Series: id, Outcome: word.Outcome(outcome), FailingSince: since})
	}
}

func (h *harness) healed(site string) {
	h.t.Helper()
	if _, err := h.st.Pool().Exec(context.Background(), `DELETE FROM poll_failures WHERE site = $1`, site); err != nil {
		h.t.Fatal(err)
	}
}

// notice reads one owner_notices row; ok is false when there is none.
func (h *harness) notice(kind word.NoticeKind, site string) (store.NoticeState, bool) {
	h.t.Helper()
	all, err := h.st.Notices(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	for _, n := range all {
		if n.Kind == kind && n.Site == site {
			return n, true
		}
	}
	return store.NoticeState{}, false
}

func (h *harness) wantMessages(want ...string) {
	h.t.Helper()
	got := h.sink.footers(h.t)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		h.t.Fatalf("messages: got %q, want %q", got, want)
	}
}
