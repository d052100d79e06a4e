package notify_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// While the webhook is being asked, the notifier holds no pooled connection
// and no lock on the notice: a webhook that hangs costs the database
// nothing (docs/adr/0005).
func TestNoConnectionOrLockIsHeldWhileTheWebhookIsAsked(t *testing.T) {
	t.Parallel()
	var h *harness
	type seen struct {
		acquired int32
		lockErr  error
	}
	during := make(chan seen, 1)
	h = newHarness(t, config{reply: func(_ int, w http.ResponseWriter, r *http.Request) bool {
		ctx, cancel := context.WithTimeout(r.Context(), time.Second)
		defer cancel()
		s := seen{acquired: h.st.Pool().Stat().AcquiredConns()}
		// Another process wanting the notice's row must not wait for the POST.
		_, s.lockErr = h.st.Pool().Exec(ctx, `SELECT 1 FROM owner_notices WHERE kind = 'stall' FOR UPDATE NOWAIT`)
		during <- s
		w.WriteHeader(http.StatusNoContent)
		return true
	}})
	h.run("asurascans", 0, 14, stallPass)
	h.wantMessages("stall asurascans")
	s := <-during
	if s.acquired != 0 {
		t.Errorf("%d pooled connections were held while the webhook was asked; want none", s.acquired)
	}
	if s.lockErr != nil {
		t.Errorf("the notice's row was locked while the webhook was asked: %v", s.lockErr)
	}
	if n, _ := h.notice(word.Stall, "asurascans"); n.NotifiedAt.IsZero() || n.ClaimedBy != "" {
		t.Fatalf("after the send: %+v; want sent and the claim let go", n)
	}
}

// claimAs writes a claim as a process that then stopped would have left it.
func (h *harness) claimAs(kind word.NoticeKind, site, by string, at time.Time) {
	h.t.Helper()
	if err := h.st.OpenNotice(context.Background(), kind, site); err != nil {
		h.t.Fatal(err)
	}
	if ok, err := h.st.ClaimNotice(context.Background(), kind, site, by, at, storetest.Milli(1)); !ok || err != nil {
		h.t.Fatalf("claim: %v %v", ok, err)
	}
}

func TestAProcessThatStoppedBetweenClaimAndAnswerNeverCausesASecondMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config{})
	for x := 0.0; x < 13; x++ {
		h.insertPass("asurascans", hours(x), stallPass)
	}
	// A claim younger than the bound: its holder may still be sending.
	h.claimAs(word.Stall, "asurascans", "alive", time.Now())
	h.pass("asurascans", hours(13), stallPass)
	if n, _ := h.notice(word.Stall, "asurascans"); !n.NotifiedAt.IsZero() || n.ClaimedBy != "alive" {
		t.Fatalf("a live claim was taken over: %+v", n)
	}
	h.wantMessages()

	// A claim past the bound: its holder stopped after claiming, perhaps
	// after the POST. The notice counts as sent; nothing is sent again.
	stale := time.Now().Add(-notify.StaleClaim - time.Minute)
	if _, err := h.st.Pool().Exec(context.Background(), `UPDATE owner_notice_claims SET claimed_by = 'gone', claimed_at = $1`, storetest.Milli(stale.UnixMilli())); err != nil {
		t.Fatal(err)
	}
	h.run("asurascans", 14, 20, stallPass)
	h.wantMessages()
	n, _ := h.notice(word.Stall, "asurascans")
	if !n.NotifiedAt.Equal(storetest.Milli(stale.UnixMilli())) || n.ClaimedBy != "" {
		t.Fatalf("after the stale claim: %+v; want counted as sent at the claim's time", n)
	}
	if !strings.Contains(h.logs.String(), "claimed_by=gone") {
		t.Errorf("the settled claim was not logged:\n%s", h.logs)
	}
	// The episode ends and the next one sends again, once.
	h.pass("asurascans", hours(20), healthyPass)
	h.run("asurascans", 21, 35, stallPass)
	h.wantMessages("stall asurascans")
}

// A claimed send whose pass context ends mid-POST still records the answer,
// so its claim is not left to read as a crash.
func TestASendCutShortByItsContextLetsTheClaimGo(t *testing.T) {
	t.Parallel()
	// The pass's context ends once the POST has reached the webhook, however
	// long the reads before it took: the send is cut short mid-POST.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHarness(t, config{reply: func(_ int, w http.ResponseWriter, r *http.Request) bool {
		cancel()
		<-r.Context().Done()
		return false
	}})
	for x := 0.0; x < 13; x++ {
		h.insertPass("asurascans", hours(x), stallPass)
	}
	// The later subjects' reads fail on the ended context; that is the pass's
	// error to log, not the point here.
	_ = h.n.Check(ctx, "asurascans", hours(13))
	n, _ := h.notice(word.Stall, "asurascans")
	// The POST had been written when the context ended: it may have arrived,
	// so it counts as sent, marked as maybe not arrived (docs/adr/0005).
	if n.ClaimedBy != "" || n.Attempts != 1 || n.NotifiedAt.IsZero() || !n.SentUnknown {
		t.Fatalf("after a send cut short: %+v; want one attempt, counted as sent-unknown, and no claim", n)
	}
	var left int
	err := h.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM owner_notice_claims`).Scan(&left)
	if err != nil || left != 0 {
		t.Fatalf("claims left: %d %v", left, err)
	}
}

// Notice text comes only from validated fields (the condition and the
// Site's fixed name): whatever the Series of an adapter-broken Site are
// titled, none of it reaches the embed.
func TestHostileSeriesTitlesNeverReachTheEmbed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config{})
	hostile := []string{
		"@everyone read this", "<script>alert(1)</script>", "[click](https://evil.example/x)",
		"<@&123456789> ping", "https://evil.example/phish", "**bold** `code` ||spoiler||",
	}
	ctx := context.Background()
	for i, title := range hostile {
		id := "h" + string(rune('0'+i))
		if err := h.st.CreateSeries(ctx, store.Series{
			Site: "demonicscans", SeriesID: id, Title: title, Kind: "manga",
			URL: "https://demonicscans.example/series/" + id,
		}, storetest.Milli(1)); err != nil {
			t.Fatal(err)
		}
		storetest.Insert(t, h.st.Pool(), storetest.Failure{Site: word.Demonicscans, Series: id, Outcome: word.NoChapter, FailingSince: hours(0)})
	}
	h.run("demonicscans", 0, 14, pass{due: 6, checked: 6, noChapter: 6})
	h.wantMessages("adapter-broken demonicscans")
	h.sink.mu.Lock()
	raw := h.sink.accepted[0]
	h.sink.mu.Unlock()
	var p struct {
		Embeds []map[string]any `json:"embeds"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || len(p.Embeds) != 1 {
		t.Fatalf("not one embed: %s", raw)
	}
	text, _ := json.Marshal(p.Embeds[0])
	body := html.UnescapeString(strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(text)))
	for _, bad := range []string{"@everyone", "<", ">", "evil.example", "alert(", "**", "`", "||", "<@&", "[click]"} {
		if strings.Contains(body, bad) {
			t.Errorf("the embed carries %q from a Series title:\n%s", bad, body)
		}
	}
	if !strings.Contains(string(raw), `"allowed_mentions":{"parse":[]}`) {
		t.Errorf("the embed may ping: %s", body)
	}
}
