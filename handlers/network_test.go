package handlers_test

import (
	"context"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/fetch"
	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/word"
)

// A plain Site our network cannot reach (issue 23, item 2; docs/adr/0022):
// a real pass against a closed loopback port, then the pages. The Series
// page names our network and its check, never the Site's 5xx nor a healthy
// read; the old errors row it carried from before is not what it shows;
// the Lanes page says the Lane reads nothing and why; Test read says where
// the read stopped.
func TestAPlainSiteOurNetworkCannotReachIsNamedAsOurs(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	base, _ := url.Parse("http://" + closed)
	reader := fetch.NewReader(fetch.ReaderOptions{BaseURLs: map[string]*url.URL{"asurascans": base}, BrowserSites: word.BrowserSites{}, Timeout: 5 * time.Second})
	var lanes *poller.Poller
	h := newHarness(t, func(d *handlers.Deps) {
		lanes = poller.New(d.Store, reader, poller.Config{Now: func() time.Time { return t0 }, Logger: slog.New(slog.DiscardHandler)})
		d.Reads = lanes
	})
	t.Cleanup(lanes.Close)
	h.seed([]fixture{
		{id: "fresh", url: "https://asurascans.com/comics/fresh", checkedAgo: 13 * time.Hour, bookmarked: true},
		{id: "was-errors", url: "https://asurascans.com/comics/was-errors", chapter: "3", checkedAgo: 13 * time.Hour,
			bookmarked: true, failure: "errors", failingFor: 13 * time.Hour},
	})
	pass := lanes.RunPass(context.Background(), "asurascans")
	if pass.Counts.Of(word.Unreachable) != 2 {
		t.Fatalf("pass %+v: want both Polls unreachable", pass)
	}
	if n := h.count(`SELECT count(*) FROM poll_failures WHERE series_id = 'fresh'`); n != 0 {
		t.Fatalf("an unreachable Poll wrote a failure row")
	}

	c := h.owner()
	for _, id := range []string{"fresh", "was-errors"} {
		note := h.get(c, "/admin/series/asurascans/"+id).testid("outcome-note")
		text := squash(note.Text())
		if note.AttrOr("data-outcome", "") != "unreachable" {
			t.Errorf("%s: the note is for %q: %q", id, note.AttrOr("data-outcome", ""), text)
		}
		for _, want := range []string{"could not reach asurascans.com", "our side", "check this machine's network and DNS",
			"curl -sI https://asurascans.com", "says nothing about the Series"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: outcome note %q lacks %q", id, text, want)
			}
		}
		for _, wrong := range []string{"The Site answered with an error", "wait for the Site", "sidecar", "read the page"} {
			if strings.Contains(text, wrong) {
				t.Errorf("%s: outcome note %q says %q", id, text, wrong)
			}
		}
	}

	// Never reached, so never read: the "no chapter" fault, whose sentence
	// blames the address or the adapter, does not list it (issue 23).
	for filter, want := range map[string]int{"never-checked": 1, "no-chapter": 0} {
		if n := h.get(c, "/admin/series?filter="+filter).find(`[data-series-id="fresh"]`).Length(); n != want {
			t.Errorf("filter %s lists the unreached Series %d times, want %d", filter, n, want)
		}
	}

	row := h.get(c, "/admin/lanes").find(`[data-site="asurascans"]`)
	if text := squash(row.Text()); !strings.Contains(text, "cannot reach the Site") ||
		!strings.Contains(text, "curl -sI https://asurascans.com") || strings.Contains(text, "sidecar unreachable") {
		t.Errorf("the Lane row says %q", text)
	}

	res := h.post(c, "/admin/series/asurascans/fresh/test-read", nil, "HX-Request", "true").testid("test-read-result")
	if got := squash(res.Find(`[data-testid="test-read-status"]`).Text()); res.AttrOr("data-outcome", "") != "unreachable" ||
		got != "no HTTP answer (our network: DNS, the connection or TLS)" {
		t.Errorf("Test read shows %q: %q", res.AttrOr("data-outcome", ""), got)
	}
	if got := squash(res.Find(`[data-testid="test-read-error"]`).Text()); !strings.Contains(got, "the connection was refused") {
		t.Errorf("Test read's error %q does not say the connection was refused", got)
	}
}
