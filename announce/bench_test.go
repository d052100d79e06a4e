package announce_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/announce"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// The latency goal of issue 21: a confirmed chapter reaches the sink within
// 5 s of the Poll that confirmed it (p99), at 50 000 Series with 200
// Readers.
const (
	latencySeries  = 50_000
	latencyReaders = 200
	// latencyTargets are the novelfull Series the measured Polls confirm,
	// each bookmarked behind by latencyBehind Readers.
	latencyTargets = 50
	latencyBehind  = 5
)

// latencyData is the data set, generated inside PostgreSQL from fixed
// arithmetic: 200 Discord Readers, every one with Discord on, about 250
// Bookmarks each spread over the 50 000 Series (caught up, Progress 1000),
// a day of Arrivals on one Series in eight (nobody behind: the decision
// still walks them every pass, as in production), and the target Series
// (novelfull, i%6 = 4, i <= 6·latencyTargets) each bookmarked at Progress
// 10 by latencyBehind more Readers (and the spread's few, set behind too). Every Series was checked a minute ago
// and is next read in a month, so a pass reads only what a Forced Poll
// makes due. $1 is now.
var latencyData = []string{
	`INSERT INTO readers (discord_id, name, created_at)
	 SELECT (100000000000000000 + r)::text, 'Reader ' || r, $1::timestamptz FROM generate_series(1, 200) r`,
	`INSERT INTO reader_settings (reader_id, discord, updated_at) SELECT discord_id, true, $1::timestamptz FROM readers`,
	`INSERT INTO series (site, series_id, url, title, kind, latest_chapter_num, latest_chapter_url,
	        checked_at, next_read_at, created_at)
	 SELECT k.site, 's' || lpad(i::text, 7, '0'), 'https://' || k.host || '/series/s' || i, 'Series ' || i, k.kind,
	        10, '', $1::timestamptz - interval '1 minute', $1::timestamptz + interval '30 days', $1::timestamptz - interval '400 days'
	   FROM generate_series(1, 50000) i,
	        LATERAL (SELECT (ARRAY['asurascans','demonicscans','comix','kagane','novelfull','lightnovelworld'])[i % 6 + 1] AS site,
	                        (ARRAY['asuracomic.net','demonicscans.org','comix.to','kagane.org','novelfull.com','lightnovelworld.com'])[i % 6 + 1] AS host,
	                        CASE WHEN i % 6 >= 4 THEN 'novel' ELSE 'manga' END AS kind) k`,
	`INSERT INTO bookmarks (reader_id, site, series_id, progress_num, created_at, updated_at)
	 SELECT (100000000000000000 + r)::text,
	        (ARRAY['asurascans','demonicscans','comix','kagane','novelfull','lightnovelworld'])[x.n % 6 + 1],
	        's' || lpad(x.n::text, 7, '0'), 1000, $1, $1
	   FROM generate_series(1, 200) r, generate_series(0, 249) k,
	        LATERAL (SELECT (r * 7919 + k * 197) % 50000 + 1 AS n) x
	 ON CONFLICT DO NOTHING`,
	`INSERT INTO chapter_arrivals (site, series_id, chapter_num, chapter_url, confirmed_at, noticed_at)
	 SELECT site, series_id, 9, url || '/9', $1::timestamptz - (substr(series_id, 2)::int % 1440) * interval '1 minute',
	        $1::timestamptz - (substr(series_id, 2)::int % 1440) * interval '1 minute'
	   FROM series WHERE substr(series_id, 2)::int % 8 = 0`,
	`INSERT INTO bookmarks (reader_id, site, series_id, progress_num, created_at, updated_at)
	 SELECT (100000000000000000 + 1 + (i * 37 + k * 41) % 200)::text, 'novelfull', 's' || lpad(i::text, 7, '0'), 10, $1::timestamptz, $1::timestamptz
	   FROM generate_series(4, 6 * 50, 6) i, generate_series(1, 5) k
	 ON CONFLICT (reader_id, site, series_id) DO UPDATE SET progress_num = 10`,
	`UPDATE bookmarks SET progress_num = 10 WHERE site = 'novelfull' AND substr(series_id, 2)::int <= 6 * 50`,
	`VACUUM ANALYZE`,
}

// countingReader's page of a Series says one chapter more each read: every
// Forced Poll of it confirms a new chapter.
type countingReader struct {
	mu    sync.Mutex
	reads map[string]int
}

func (r *countingReader) Read(_ context.Context, _, url string) adapters.Result {
	r.mu.Lock()
	r.reads[url]++
	ch := strconv.Itoa(10 + r.reads[url])
	r.mu.Unlock()
	return adapters.Result{Outcome: word.OK, Checked: true, Status: 200, Facts: adapters.Facts{
		Title: "A Title", Kind: word.Novel, LatestChapter: ch, HasLatest: true, LatestChapterURL: url + "/" + ch}}
}

func (r *countingReader) Route(string) word.Route { return word.RoutePlain }
func (r *countingReader) HasBrowser() bool        { return false }

// timedSink is the Readers' webhook: it keeps when each message came and
// how many users it allowed to be mentioned.
type timedSink struct {
	mu       sync.Mutex
	at       []time.Time
	mentions []int
}

func (s *timedSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	var m struct {
		AllowedMentions struct{ Users []string } `json:"allowed_mentions"`
	}
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &m)
	s.mu.Lock()
	s.at, s.mentions = append(s.at, at), append(s.mentions, len(m.AllowedMentions.Users))
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *timedSink) last() (int, time.Time, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.at) == 0 {
		return 0, time.Time{}, 0
	}
	return len(s.at), s.at[len(s.at)-1], s.mentions[len(s.mentions)-1]
}

// BenchmarkAnnouncementLatency: each iteration Forces a Poll of one target
// Series, whose page says a new chapter, and runs the real pass whose
// Notifier is the Announcer's Hook; it measures from the pass's start to
// the Discord sink's receipt (poll-to-sink), and from the Hook's start
// (hook-to-sink), and reports their p50 and p99.
func BenchmarkAnnouncementLatency(b *testing.B) {
	ctx := context.Background()
	pool := storetest.Pool(b, nil)
	st := store.New(pool)
	// The store keeps instants to the millisecond (ADR 0015): a check stamp
	// compares checked_at as it read it.
	seeded := time.Now().Truncate(time.Millisecond)
	for _, q := range latencyData {
		var args []any
		if strings.Contains(q, "$1") {
			args = []any{seeded}
		}
		if _, err := pool.Exec(ctx, q, args...); err != nil {
			b.Fatalf("%v\n%s", err, q)
		}
	}
	b.Logf("data set: %d Series, %d Readers, %d Bookmarks, built in %s",
		count(b, pool, "series"), count(b, pool, "readers"), count(b, pool, "bookmarks"), time.Since(seeded).Round(time.Millisecond))

	sink := &timedSink{}
	srv := httptest.NewServer(sink)
	b.Cleanup(srv.Close)
	d, err := announce.NewDiscord(word.Secret(srv.URL+"/api/webhooks/1/bench"), nil)
	if err != nil {
		b.Fatal(err)
	}
	a, err := announce.New(announce.Options{Store: st, Senders: []announce.Sender{d}, PublicBaseURL: "https://mb.example"})
	if err != nil {
		b.Fatal(err)
	}
	var hookAt time.Time
	hook := a.Hook()
	p := poller.New(st, &countingReader{reads: map[string]int{}}, poller.Config{
		Logger: slog.New(slog.DiscardHandler), Sites: []string{"novelfull"},
		Notifier: func(ctx context.Context, site string, passAt time.Time) error {
			hookAt = time.Now()
			return hook(ctx, site, passAt)
		}})
	b.Cleanup(p.Close)

	var poll, fromHook []time.Duration
	i := 0
	for b.Loop() {
		target := "s" + leftPad(4+6*(i%latencyTargets))
		i++
		if err := st.ForceSeriesPoll(ctx, "novelfull", target, time.Now()); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if pass := p.RunPass(ctx, "novelfull"); pass.Checked != 1 {
			b.Fatalf("the pass checked %d Series, want %s alone: %+v", pass.Checked, target, pass)
		}
		n, at, mentioned := sink.last()
		if n != i || mentioned < latencyBehind {
			b.Fatalf("after %d confirmations the sink got %d messages, the last mentioning %d Readers (want at least %d)",
				i, n, mentioned, latencyBehind)
		}
		poll, fromHook = append(poll, at.Sub(start)), append(fromHook, at.Sub(hookAt))
	}
	b.ReportMetric(pct(poll, 50), "p50-poll-to-sink-ms")
	b.ReportMetric(pct(poll, 99), "p99-poll-to-sink-ms")
	b.ReportMetric(pct(fromHook, 50), "p50-hook-to-sink-ms")
	b.ReportMetric(pct(fromHook, 99), "p99-hook-to-sink-ms")
}

func leftPad(i int) string {
	s := strconv.Itoa(i)
	for len(s) < 7 {
		s = "0" + s
	}
	return s
}

// pct is the nearest-rank p-th percentile of ds, in milliseconds.
func pct(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	k := (p*len(s) + 99) / 100
	return float64(s[max(k, 1)-1].Microseconds()) / 1000
}

func count(b *testing.B, pool *pgxpool.Pool, table string) int {
	b.Helper()
	var n int
	// table is one of this file's constants, never input.
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}
