package handlers_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/handlers"
)

// wantAPIUnavailable is the token API's answer while the database is away:
// 503 with the word unavailable and a Retry-After in seconds, which the
// userscript queues on (never 500 internal, which says the fault is ours).
func wantAPIUnavailable(t *testing.T, what string, a apiAnswer) {
	t.Helper()
	if a.status != http.StatusServiceUnavailable || a.word() != "unavailable" {
		t.Fatalf("%s: %d %s; want 503 unavailable", what, a.status, a.raw)
	}
	if s, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || s <= 0 {
		t.Fatalf("%s: Retry-After %q; want seconds", what, a.header.Get("Retry-After"))
	}
	if msg, _ := a.json["message"].(string); !strings.HasSuffix(msg, ".") || !strings.Contains(msg, "Retry-After") {
		t.Fatalf("%s: message %q", what, msg)
	}
}

const asuraChapter10 = "https://asurascans.com/comics/nano-machine-7f873ca6/chapter/10"

func TestAStoppedDatabaseAnswersTheAPI503Unavailable(t *testing.T) {
	t.Parallel()
	h, proxy := outageHarness(t)
	h.seedAsura()
	tok := h.apiToken("r1", "")
	write := `{"url":"` + asuraChapter10 + `","chapter":10}`
	before := h.snapshot()

	proxy.setDown(true)
	wantAPIUnavailable(t, "GET /me", h.api("GET", "/api/v1/me", tok, ""))
	wantAPIUnavailable(t, "GET /bookmarks", h.api("GET", "/api/v1/bookmarks", tok, ""))
	wantAPIUnavailable(t, "GET /lookup", h.api("GET", "/api/v1/lookup?url="+url.QueryEscape(asuraSeries), tok, ""))
	wantAPIUnavailable(t, "POST /progress", h.api("POST", "/api/v1/progress", tok, write))
	wantAPIUnavailable(t, "POST /progress with a key", h.api("POST", "/api/v1/progress", tok, write, "Idempotency-Key", "k-1"))
	wantAPIUnavailable(t, "POST /sightings", h.api("POST", "/api/v1/sightings", tok, `{"url":"`+asuraSeries+`","chapters":[20]}`))
	if logs := h.logs.String(); !strings.Contains(logs, "database unavailable") || strings.Contains(logs, "level=ERROR msg=api:") {
		t.Errorf("want a warning that the database was unavailable, no API error line:\n%s", logs)
	}

	proxy.setDown(false)
	if h.snapshot() != before {
		t.Fatal("something changed while the database was away")
	}
	// The userscript's retry, with the same key, is applied once it is back.
	if a := h.api("POST", "/api/v1/progress", tok, write, "Idempotency-Key", "k-1"); a.status != 200 || a.json["applied"] != true {
		t.Fatalf("the retry after the database came back: %d %s", a.status, a.raw)
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "10" {
		t.Fatalf("progress %q after the retry", got)
	}
}

// A frozen database is one slower than the request's deadline: the API's own
// statements run out of time after its Bearer lookup succeeded.
func TestAFrozenDatabaseAnswersTheAPI503UnavailableAndAKeyedRetryRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(d *handlers.Deps) { d.RequestTimeout = 300 * time.Millisecond })
	h.seedAsura()
	tok := h.apiToken("r1", "")
	write := `{"url":"` + asuraChapter10 + `","chapter":10}`

	ctx := context.Background()
	tx, err := h.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE bookmarks IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	wantAPIUnavailable(t, "GET /bookmarks", h.api("GET", "/api/v1/bookmarks", tok, ""))
	wantAPIUnavailable(t, "GET /lookup", h.api("GET", "/api/v1/lookup?url="+url.QueryEscape(asuraSeries), tok, ""))
	// The key is claimed before the frozen write, and must be given back
	// although the request's deadline is over: else the retry is 409.
	wantAPIUnavailable(t, "POST /progress with a key", h.api("POST", "/api/v1/progress", tok, write, "Idempotency-Key", "k-frozen"))
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "2" {
		t.Fatalf("progress %q after the refused write; want it unchanged", got)
	}
	a := h.api("POST", "/api/v1/progress", tok, write, "Idempotency-Key", "k-frozen")
	if a.status != 200 || a.json["applied"] != true || a.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the retry after the freeze: %d %s", a.status, a.raw)
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "10" {
		t.Fatalf("progress %q after the retry", got)
	}
}

// A key the database's going away left in flight (claimed, then neither
// written nor given back) is taken over by the userscript's retry once the
// claim is older than the request's whole budget, and the write runs: a 409,
// which the userscript drops, would lose the Progress. A younger claim may
// still be running and answers 409 as before; of retries racing for an old
// one, exactly one runs the write.
func TestARetryTakesOverAKeyAnOutageLeftInFlight(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedAsura()
	tok := h.apiToken("r1", "")
	write := `{"url":"` + asuraChapter10 + `","chapter":10}`
	// leftInFlight makes the row a real first request claims (its path and
	// body's hash), as the outage leaves it: in flight since age ago, and the
	// Progress unchanged.
	leftInFlight := func(key string, age time.Duration) {
		if a := h.api("POST", "/api/v1/progress", tok, write, "Idempotency-Key", key); a.status != 200 {
			t.Fatalf("the first request: %d %s", a.status, a.raw)
		}
		h.exec(`UPDATE api_idempotency SET status = 0, response = '', created_at = $1 WHERE reader_id = 'r1' AND key = $2`, t0.Add(-age), key)
		h.exec(`UPDATE bookmarks SET progress_num = 2 WHERE reader_id = 'r1' AND series_id = 'nano-machine'`)
	}

	leftInFlight("k-young", 2*time.Second)
	a := h.api("POST", "/api/v1/progress", tok, write, "Idempotency-Key", "k-young")
	if a.status != http.StatusConflict || a.word() != "idempotency_key_in_flight" {
		t.Fatalf("a claim younger than the budget: %d %s; want 409 in flight", a.status, a.raw)
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "2" {
		t.Fatalf("progress %q after the 409; want it unchanged", got)
	}
	// Retry-After says when the claim may be taken over: a retry sent then
	// (the claim older by as much, the harness's clock being fixed) runs.
	wait, err := strconv.Atoi(a.header.Get("Retry-After"))
	if err != nil || wait < 1 {
		t.Fatalf("409 in flight: Retry-After %q", a.header.Get("Retry-After"))
	}
	h.exec(`UPDATE api_idempotency SET created_at = created_at - $1 * interval '1 second' WHERE reader_id = 'r1' AND key = 'k-young'`, wait)
	a = h.api("POST", "/api/v1/progress", tok, write, "Idempotency-Key", "k-young")
	if a.status != 200 || a.json["applied"] != true || a.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the retry after Retry-After %ds: %d %s", wait, a.status, a.raw)
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "10" {
		t.Fatalf("progress %q after the retry; want 10", got)
	}
	if again := h.api("POST", "/api/v1/progress", tok, write, "Idempotency-Key", "k-young"); again.raw != a.raw || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the retry's answer is not replayed: %d %s", again.status, again.raw)
	}

	leftInFlight("k-raced", 10*time.Minute)
	ran, answers := racingRetries(t, h, tok, write, "k-raced", 8)
	if ran != 1 {
		t.Fatalf("%d retries ran the write; want exactly one:\n%s", ran, strings.Join(answers, "\n"))
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "10" {
		t.Fatalf("progress %q after the racing retries; want 10", got)
	}
}

// racingRetries sends n copies of one keyed Progress write at once and
// counts those that ran it (200, not replayed); every other answer must be
// 409 in flight or the replayed answer.
func racingRetries(t *testing.T, h *harness, tok, body, key string, n int) (ran int, answers []string) {
	t.Helper()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		start = make(chan struct{})
	)
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", h.srv.URL+"/api/v1/progress", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", key)
			<-start
			resp, err := anonymous().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			replayed := resp.Header.Get("Idempotent-Replayed") == "true"
			mu.Lock()
			defer mu.Unlock()
			answers = append(answers, strconv.Itoa(resp.StatusCode)+" replayed="+strconv.FormatBool(replayed)+" "+string(b))
			switch {
			case resp.StatusCode == 200 && !replayed:
				ran++
			case resp.StatusCode == 200, resp.StatusCode == http.StatusConflict && strings.Contains(string(b), `"idempotency_key_in_flight"`):
			default:
				t.Errorf("a racing retry answered %d %s", resp.StatusCode, b)
			}
		})
	}
	close(start)
	wg.Wait()
	return ran, answers
}
