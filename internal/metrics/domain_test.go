package metrics_test

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/mangabookmark/mangabookmark/announce"
	"github.com/mangabookmark/mangabookmark/fetch"
	"github.com/mangabookmark/mangabookmark/internal/metrics"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// newDomain registers a Domain reading st on a registry of its own.
func newDomain(t *testing.T, st metrics.DomainStore, o metrics.DomainOptions) (*metrics.Domain, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	d, err := metrics.NewDomain(reg, st, o)
	if err != nil {
		t.Fatal(err)
	}
	return d, reg
}

// gather scrapes reg as /metrics would; a failing scrape fails the test.
func gather(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("the scrape failed: %v", err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// sample is the family's sample whose labels are exactly labels (name=value
// pairs), or nil.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := len(got) == len(labels)/2
		for i := 0; i+1 < len(labels); i += 2 {
			match = match && got[labels[i]] == labels[i+1]
		}
		if match {
			return m
		}
	}
	return nil
}

// value is the counter's or gauge's value of the sample, NaN when absent.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	m := sample(fams, name, labels...)
	switch {
	case m == nil:
		return math.NaN()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	}
	return math.NaN()
}

// standIn is novelfull on a loopback server: a/b's pages, the first one
// the fixture whose latest chapter is 2334, the second gone (404).
func standIn(t *testing.T) *fetch.Reader {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("..", "..", "adapters", "testdata", "novelfull", "ongoing.html"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/a.html" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(bytes.ReplaceAll(page, []byte("reverend-insanity"), []byte("a"))) // the fixture's own id
	}))
	t.Cleanup(srv.Close)
	bases, err := fetch.ParseBaseURLs("novelfull=" + srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	none, _ := word.ParseBrowserSites("none")
	return fetch.NewReader(fetch.ReaderOptions{BaseURLs: bases, BrowserSites: none})
}

// TestDomainMetricsAfterARealPass runs one pass of the novelfull Lane
// against a stand-in Site, with the Domain observing, and scrapes: the
// pass, its Polls by outcome, the one Arrival's detection delay, and the
// gauges the pages show, each matching the seeded rows.
func TestDomainMetricsAfterARealPass(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	storetest.Insert(t, st.Pool(),
		// Two due novelfull Series at chapter 10, read ten minutes ago.
		storetest.Series{Site: word.Novelfull, ID: "a", URL: "https://novelfull.com/a.html", Kind: word.Novel,
			LatestChapter: "10", CheckedAt: ago(10 * time.Minute), NextReadAt: ago(time.Minute), Bookmarks: 1},
		storetest.Series{Site: word.Novelfull, ID: "b", URL: "https://novelfull.com/b.html", Kind: word.Novel,
			LatestChapter: "10", CheckedAt: ago(10 * time.Minute), NextReadAt: ago(time.Minute), Bookmarks: 1},
		// comix: two failing for two days, the oldest read a day ago.
		storetest.Series{Site: word.Comix, ID: "c1", URL: "https://comix.to/title/c1", LatestChapter: "5", CheckedAt: ago(24 * time.Hour)},
		storetest.Series{Site: word.Comix, ID: "c2", URL: "https://comix.to/title/c2", LatestChapter: "5", CheckedAt: ago(time.Hour)},
		// kagane: failing an hour only (too young to count), read three hours ago.
		storetest.Series{Site: word.Kagane, ID: "k1", URL: "https://kagane.org/series/k1", LatestChapter: "5", CheckedAt: ago(3 * time.Hour)},
		// demonicscans: a Series never read.
		storetest.Series{Site: word.Demonicscans, ID: "d1", URL: "https://demonicscans.org/manga/d1"},
	)
	storetest.Insert(t, st.Pool(),
		storetest.Failure{Site: word.Comix, Series: "c1", Outcome: word.Errors, FailingSince: ago(48 * time.Hour)},
		storetest.Failure{Site: word.Comix, Series: "c2", Outcome: word.NotFound, FailingSince: ago(48 * time.Hour)},
		storetest.Failure{Site: word.Kagane, Series: "k1", Outcome: word.Errors, FailingSince: ago(time.Hour)})
	storetest.Insert(t, st.Pool(),
		storetest.Notice{Kind: word.Stall, Site: "comix"},
		storetest.Notice{Kind: word.AdapterBroken, Site: "kagane", NotifiedAt: ago(time.Hour)})

	d, reg := newDomain(t, st, metrics.DomainOptions{})
	p := poller.New(st, standIn(t), poller.Config{Sites: []string{"novelfull"}, Observer: d,
		Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	pass := p.RunPass(ctx, "novelfull")
	if pass.Skip != word.SkipNone || pass.Counts.OK != 1 || pass.Counts.NotFound != 1 {
		t.Fatalf("the pass: %+v", pass)
	}
	fams := gather(t, reg)

	counters := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"mangabookmark_passes_total", []string{"site", "novelfull", "skip", "none"}, 1},
		{"mangabookmark_passes_total", []string{"site", "comix", "skip", "none"}, 0},
		{"mangabookmark_polls_total", []string{"site", "novelfull", "outcome", "ok"}, 1},
		{"mangabookmark_polls_total", []string{"site", "novelfull", "outcome", "not_found"}, 1},
		{"mangabookmark_polls_total", []string{"site", "novelfull", "outcome", "errors"}, 0},
		{"mangabookmark_series_due", []string{"site", "novelfull"}, 2},
		{"mangabookmark_series_due", []string{"site", "comix"}, 0},
		{"mangabookmark_series_failing", []string{"site", "comix"}, 2},
		{"mangabookmark_series_failing", []string{"site", "kagane"}, 0},
		{"mangabookmark_owner_notices_open", []string{"kind", "stall"}, 1},
		{"mangabookmark_owner_notices_open", []string{"kind", "adapter-broken"}, 1},
		{"mangabookmark_owner_notices_open", []string{"kind", "sidecar-down"}, 0},
		{"mangabookmark_scrape_errors_total", nil, 0},
	}
	for _, c := range counters {
		if got := value(fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}

	// The oldest reads: comix's a day, kagane's three hours, novelfull's
	// just now (the pass read both), demonicscans' never (+Inf), and no
	// sample for a Site with no Series.
	oldest := "mangabookmark_oldest_read_age_seconds"
	for site, want := range map[string]float64{"comix": 86400, "kagane": 3 * 3600, "novelfull": 0} {
		if got := value(fams, oldest, "site", site); got < want || got > want+120 {
			t.Errorf("%s{site=%q} = %v, want about %v", oldest, site, got, want)
		}
	}
	if got := value(fams, oldest, "site", "demonicscans"); !math.IsInf(got, 1) {
		t.Errorf("a Site with a Series never read: %v, want +Inf", got)
	}
	if m := sample(fams, oldest, "site", "lightnovelworld"); m != nil {
		t.Errorf("a Site with no Series has an oldest read: %v", m)
	}

	// One Arrival (10 → 2334), noticed at the read ten minutes before.
	h := sample(fams, "mangabookmark_detection_delay_seconds", "site", "novelfull").GetHistogram()
	if h.GetSampleCount() != 1 || h.GetSampleSum() < 600 || h.GetSampleSum() > 720 {
		t.Fatalf("detection delay: %d observations summing %v s, want one of about 600 s", h.GetSampleCount(), h.GetSampleSum())
	}
	if h := sample(fams, "mangabookmark_detection_delay_seconds", "site", "comix").GetHistogram(); h.GetSampleCount() != 0 {
		t.Errorf("comix observed %d delays, want none", h.GetSampleCount())
	}
	assertBounded(t, fams)
}

// TestDomainCountsSendsByResult sends owner notices and Reader
// announcements through the real notify and announce paths to loopback
// webhooks that answer 2xx, then 429, and counts each by its result.
func TestDomainCountsSendsByResult(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ctx := context.Background()
	d, reg := newDomain(t, st, metrics.DomainOptions{})
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

	// Owner notices: comix and kagane have stalled for 13 hours; Discord
	// takes the first message and rate-limits the second.
	for _, site := range []word.Site{word.Comix, word.Kagane} {
		storetest.Insert(t, st.Pool(),
			storetest.Pass{Site: site, StartedAt: t0, Due: 3},
			storetest.Pass{Site: site, StartedAt: t0.Add(13 * time.Hour), Due: 3})
	}
	hook := webhook(t, "/api/webhooks/1/notices")
	n, err := notify.New(notify.Options{Store: st, WebhookURL: hook, Observer: d})
	if err != nil {
		t.Fatal(err)
	}
	for _, site := range []string{"comix", "kagane"} {
		if err := n.Check(ctx, site, t0.Add(13*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}

	// Announcements: Ada, on Discord, behind on a comix Series that gets
	// chapter 101 (taken), then 102 (rate-limited).
	storetest.Insert(t, st.Pool(), storetest.Reader{ID: "111", Name: "Ada"})
	storetest.Insert(t, st.Pool(), storetest.Series{Site: word.Comix, ID: "s1", URL: "https://comix.to/title/s1",
		Title: "Solo", LatestChapter: "102", CheckedAt: t0})
	storetest.Insert(t, st.Pool(), storetest.Bookmark{Reader: "111", Site: word.Comix, Series: "s1", Progress: "100"})
	storetest.Insert(t, st.Pool(), storetest.ReaderSettings{Reader: "111", Discord: true})
	discord, err := announce.NewDiscord(webhook(t, "/api/webhooks/2/readers"), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := announce.New(announce.Options{Store: st, Senders: []announce.Sender{discord}, Observer: d})
	if err != nil {
		t.Fatal(err)
	}
	for i, ch := range []string{"101", "102"} {
		at := t0.Add(time.Duration(i+1) * time.Minute)
		storetest.Insert(t, st.Pool(), storetest.Arrival{Site: word.Comix, Series: "s1", Chapter: ch, ConfirmedAt: at})
		if err := a.Check(ctx, "comix", at.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}

	fams := gather(t, reg)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"mangabookmark_notice_sends_total", []string{"result", "sent"}, 1},
		{"mangabookmark_notice_sends_total", []string{"result", "rate_limited"}, 1},
		{"mangabookmark_notice_sends_total", []string{"result", "server_error"}, 0},
		{"mangabookmark_announcement_sends_total", []string{"channel", "discord", "result", "sent"}, 1},
		{"mangabookmark_announcement_sends_total", []string{"channel", "discord", "result", "rate_limited"}, 1},
		{"mangabookmark_announcement_sends_total", []string{"channel", "push", "result", "sent"}, 0},
	} {
		if got := value(fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	assertBounded(t, fams)
}

// webhook is a Discord stand-in on a loopback server at path: the first
// POST is taken (204), every later one rate-limited (429).
func webhook(t *testing.T, path string) word.Secret {
	t.Helper()
	var mu sync.Mutex
	posts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		posts++
		n := posts
		mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != path {
			t.Errorf("webhook: %s %s", r.Method, r.URL.Path)
		}
		if n == 1 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"retry_after": 30}`))
	}))
	t.Cleanup(srv.Close)
	return word.Secret(srv.URL + path)
}

// TestAScrapeWithoutTheDatabaseStillAnswers: with the database gone, the
// scrape succeeds with the counters, leaves the database gauges out, counts
// the error and logs one WARN line.
func TestAScrapeWithoutTheDatabaseStillAnswers(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	pool.Close()
	var logs bytes.Buffer
	d, reg := newDomain(t, store.New(pool), metrics.DomainOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	d.Passed("comix", word.SkipPaused, word.Counts{})
	fams := gather(t, reg)
	if got := value(fams, "mangabookmark_passes_total", "site", "comix", "skip", "paused"); got != 1 {
		t.Errorf("the counters: passes %v, want 1", got)
	}
	for _, name := range []string{"mangabookmark_series_due", "mangabookmark_series_failing",
		"mangabookmark_oldest_read_age_seconds", "mangabookmark_owner_notices_open"} {
		if fams[name] != nil {
			t.Errorf("%s was exposed from a database that did not answer", name)
		}
	}
	if got := value(fams, "mangabookmark_scrape_errors_total"); got != 1 {
		t.Errorf("scrape errors %v, want 1", got)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") {
		t.Errorf("the log: %q, want one WARN line", logs.String())
	}
}

// TestDomainLabelsStayBounded: whatever a caller passes, every label value
// is a word of its set, or "unknown", never the value passed.
func TestDomainLabelsStayBounded(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	d, reg := newDomain(t, store.New(pool), metrics.DomainOptions{})
	d.Passed("https://evil.example/series/123", word.Skip("series-123"), word.Counts{OK: 1})
	d.Detected("series-123", time.Minute)
	d.NoticeSent(word.SendResult("Discord answered 418"))
	d.Announced(word.ChannelFeed, word.SendSent)
	var none *metrics.Domain // metrics off: observing is a no-op
	none.Passed("comix", word.SkipNone, word.Counts{OK: 1})
	none.Detected("comix", time.Minute)
	none.NoticeSent(word.SendSent)
	none.Announced(word.ChannelPush, word.SendSent)
	fams := gather(t, reg)
	if got := value(fams, "mangabookmark_passes_total", "site", "unknown", "skip", "unknown"); got != 1 {
		t.Errorf("an unknown Site and Skip: %v, want counted under unknown", got)
	}
	assertBounded(t, fams)
}

// assertBounded checks every label of every mangabookmark family against
// its word set: no Series id, address or free text ever becomes a label.
func assertBounded(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	strs := func(xs ...[]string) []string { return slices.Concat(append(xs, []string{"unknown"})...) }
	words := func(ws ...string) []string { return ws }
	skips := []string{"none"}
	for _, s := range word.Skips[1:] {
		skips = append(skips, string(s))
	}
	var outcomes, kinds, results []string
	for _, o := range word.Outcomes {
		outcomes = append(outcomes, string(o))
	}
	for _, k := range word.NoticeKinds {
		kinds = append(kinds, string(k))
	}
	for _, r := range word.SendResults {
		results = append(results, string(r))
	}
	known := map[string][]string{
		"site": strs(word.SiteNames()), "skip": strs(skips), "outcome": strs(outcomes), "kind": strs(kinds),
		"result": strs(results), "channel": strs(words("discord", "push")),
	}
	for name, f := range fams {
		if !strings.HasPrefix(name, "mangabookmark_") {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				set, ok := known[l.GetName()]
				if !ok || !slices.Contains(set, l.GetValue()) {
					t.Errorf("%s: label %s=%q is not a word of its set", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// A check is a Poll attempted, a read one that reached the page (CONTEXT.md):
// a Site whose Series was checked 1084 seconds ago but never reached reads
// 1084 on the oldest check, 1 never read, and +Inf on the deprecated oldest
// read, as the README always promised for a Series never read.
func TestTheOldestCheckAndTheNeverReadAreEachTheirOwnFigure(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	now := time.Now().Truncate(time.Millisecond)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	storetest.Insert(t, st.Pool(),
		// asurascans: checked by unreachable Polls only (no number, no failure row).
		storetest.Series{Site: word.Asurascans, ID: "tried", URL: "https://asurascans.com/comics/tried", CheckedAt: ago(1084 * time.Second)},
		// novelfull: read ten minutes ago.
		storetest.Series{Site: word.Novelfull, ID: "n", URL: "https://novelfull.com/n.html", Kind: word.Novel,
			LatestChapter: "10", CheckedAt: ago(10 * time.Minute)},
		// kagane: never checked at all.
		storetest.Series{Site: word.Kagane, ID: "k", URL: "https://kagane.org/series/k"},
	)
	_, reg := newDomain(t, st, metrics.DomainOptions{Now: func() time.Time { return now }})
	fams := gather(t, reg)
	const check, unread, old = "mangabookmark_oldest_check_age_seconds", "mangabookmark_series_never_read", "mangabookmark_oldest_read_age_seconds"
	for _, c := range []struct {
		name, site string
		want       float64
	}{
		{check, "asurascans", 1084}, {unread, "asurascans", 1}, {old, "asurascans", math.Inf(1)},
		{check, "novelfull", 600}, {unread, "novelfull", 0}, {old, "novelfull", 600},
		{check, "kagane", math.Inf(1)}, {unread, "kagane", 1}, {old, "kagane", math.Inf(1)},
		{unread, "comix", 0},
	} {
		if got := value(fams, c.name, "site", c.site); got != c.want {
			t.Errorf("%s{site=%q} = %v, want %v", c.name, c.site, got, c.want)
		}
	}
	if m := sample(fams, check, "site", "comix"); m != nil {
		t.Errorf("a Site with no Series has an oldest check: %v", m)
	}
	if help := fams[old].GetHelp(); !strings.HasPrefix(help, "Deprecated") {
		t.Errorf("the old name's help does not say it is deprecated: %q", help)
	}
}
