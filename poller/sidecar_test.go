package poller_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/fetch"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/word"
)

// A dead sidecar is sidecar-down and never also a stall: after a Poll finds
// the sidecar unreachable, the Lane comes back inside the browser-down
// window, so its own pass log breaks every run of stall passes with a
// browser-down pass — the shape the owner-notice derivations assume (CONTEXT.md). Driven by the
// Lane's own rests over fifteen hours, against the real notifier and a
// local webhook sink.
func TestADeadSidecarSendsSidecarDownAndNeverAStall(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.rd.routes["kagane"] = word.RouteBrowser
	for _, id := range []string{"a", "b", "c"} {
		r.seriesOn("kagane", id)
		r.rd.script(url(id), adapters.Result{Outcome: word.Unreachable, Err: fetch.ErrUnreachable})
	}

	var mu sync.Mutex
	var footers []string
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var p struct {
			Embeds []struct {
				Footer struct{ Text string } `json:"footer"`
			} `json:"embeds"`
		}
		b, _ := io.ReadAll(req.Body)
		_ = json.Unmarshal(b, &p)
		mu.Lock()
		for _, e := range p.Embeds {
			footers = append(footers, e.Footer.Text)
		}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(sink.Close)
	n, err := notify.New(notify.Options{Store: r.st, WebhookURL: word.Secret(sink.URL + "/hook"),
		BrowserSites: word.BrowserSites{word.Kagane: true}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	r.with(func(c *poller.Config) { c.Notifier, c.Sites = n.Hook(), []string{"kagane"} })

	skips := map[word.Skip]int{}
	for end := r.clk.Now().Add(15 * time.Hour); r.clk.Now().Before(end); {
		pass := r.p.RunPass(r.ctx, "kagane")
		skips[pass.Skip]++
		r.clk.Advance(max(pass.Rest, time.Second))
	}
	if skips[""] == 0 || skips[word.SkipBrowserDown] == 0 {
		t.Fatalf("passes by skip value %v: want Polls and browser-down passes", skips)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(footers) != 1 || footers[0] != string(word.SidecarDown) {
		t.Fatalf("messages %v, want exactly one sidecar-down", footers)
	}
}
