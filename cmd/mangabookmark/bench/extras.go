package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/net/html"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/fetch"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// benchExtras measures, in this process, what the pages do not show: the
// notices' conditions, each adapter's parse, and one healthy pass.
func benchExtras(ctx context.Context, dbURL, passURL string, now time.Time) []string {
	out := []string{benchConditions(ctx, dbURL, now), ""}
	out = append(out, benchParse()...)
	return append(out, "", benchPass(ctx, passURL, now), "")
}

// timeIt is the median of runs calls of f, after one warm-up call.
func timeIt(runs int, f func() error) (time.Duration, error) {
	if err := f(); err != nil {
		return 0, err
	}
	var ds []time.Duration
	for range runs {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(start))
	}
	return quantile(ds, 0.5), nil
}

// fastest is the least of five medians of 100 calls: on a shared machine
// the least is the one the others' load disturbed least, for both sides of
// a ratio alike.
func fastest(f func() error) time.Duration {
	best := time.Duration(1 << 62)
	for range 5 {
		d, _ := timeIt(100, f)
		best = min(best, d)
	}
	return best
}

// pairedPerOp times a and b per call, in turns: batches of one size
// (about 40 ms of a, so the collection of their allocations falls inside
// the time), fifteen of each, alternating, the least batch of each kept.
// Timed in turns, a machine that slows down for a while slows both sides of
// the ratio alike.
func pairedPerOp(a, b func() error) (time.Duration, time.Duration) {
	n := 1
	for batch(a, n) < 40*time.Millisecond {
		n *= 2
	}
	bestA, bestB := time.Duration(1<<62), time.Duration(1<<62)
	for range 15 {
		bestA = min(bestA, batch(a, n))
		bestB = min(bestB, batch(b, n))
	}
	return bestA / time.Duration(n), bestB / time.Duration(n)
}

func batch(f func() error, n int) time.Duration {
	start := time.Now()
	for range n {
		_ = f()
	}
	return time.Since(start)
}

// benchConditions times the notices' conditions of every Site, the one
// statement the verdict line and `mangabookmark notices` run.
func benchConditions(ctx context.Context, dbURL string, now time.Time) string {
	st, err := store.Open(ctx, dbURL, store.Pools{Pages: 1, Lanes: 1})
	if err != nil {
		return "conditions: " + err.Error()
	}
	defer st.Close()
	n, err := notify.New(notify.Options{Store: st, BrowserSites: word.BrowserSites{word.Comix: true, word.Kagane: true}})
	if err != nil {
		return "conditions: " + err.Error()
	}
	f := func() error { _, err := n.Conditions(ctx, now); return err }
	d, err := timeIt(50, f)
	if err != nil {
		return "conditions: " + err.Error()
	}
	return fmt.Sprintf("notices' conditions, every Site, one statement: p50 %s ms, least of five medians %s ms (budget 2 ms)", ms(d), ms(fastest(f)))
}

// benchParse times each adapter's parse of its largest fixture against
// html.Parse of the same bytes (the floor any HTML adapter pays). It reads
// adapters/testdata, so it runs from the repository.
func benchParse() []string {
	out := []string{"| adapter | fixture | bytes | parse µs | floor µs (html.Parse; json.Unmarshal for JSON) | ratio (budget < 2) |", "| --- | --- | --- | --- | --- | --- |"}
	for _, site := range word.SiteNames() {
		a, _ := adapters.ByName(site)
		file, body := largestFixture(a, site)
		if body == nil {
			out = append(out, "| "+site+" | no fixture that parses (run from the repository) | | | | |")
			continue
		}
		ref, ok := adapters.RefFromPage(site, body)
		if !ok {
			ref = adapters.Ref{Site: site, SeriesID: "x", URL: "https://" + a.Domains()[0] + "/"}
		}
		// The floor is what reading the bytes at all costs: html.Parse for a
		// page, json.Unmarshal for an API answer (kagane's), which html.Parse
		// would read as one text node.
		floorOf := func() error { _, err := html.Parse(bytes.NewReader(body)); return err }
		if strings.HasSuffix(file, ".json") {
			floorOf = func() error { var v any; return json.Unmarshal(body, &v) }
		}
		parse, floor := pairedPerOp(func() error { _, err := a.Parse(body, ref); return err }, floorOf)
		out = append(out, fmt.Sprintf("| %s | %s | %d | %.0f | %.0f | %.2f |", site, filepath.Base(file), len(body),
			float64(parse.Nanoseconds())/1000, float64(floor.Nanoseconds())/1000, float64(parse)/float64(floor)))
	}
	return out
}

func largestFixture(a adapters.Adapter, site string) (string, []byte) {
	files, _ := filepath.Glob(filepath.Join("adapters", "testdata", site, "*"))
	var best string
	var body []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || len(b) <= len(body) {
			continue
		}
		ref, ok := adapters.RefFromPage(site, b)
		if !ok {
			ref = adapters.Ref{Site: site, SeriesID: "x", URL: "https://" + a.Domains()[0] + "/"}
		}
		if _, err := a.Parse(b, ref); err == nil {
			best, body = f, b
		}
	}
	return best, body
}

// writeCounter counts the statements that write.
type writeCounter struct{ writes, passLog atomic.Int64 }

func (w *writeCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	q := strings.ToUpper(strings.TrimSpace(d.SQL))
	switch {
	case strings.HasPrefix(q, "INSERT INTO POLL_PASSES"):
		w.passLog.Add(1)
	case strings.HasPrefix(q, "INSERT"), strings.HasPrefix(q, "UPDATE"), strings.HasPrefix(q, "DELETE"):
		w.writes.Add(1)
	}
	return ctx
}

func (w *writeCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// benchPass runs one pass of novelfull's Lane over 1 000 healthy due Series
// against a loopback stand-in that serves its ongoing fixture, after a
// first pass has learned their facts: every Poll reads what it read last
// time, so each should write exactly its check stamp. It runs in a database
// of its own (passURL): the data set's Series would be due too, and
// setting them aside would rewrite a sixth of it.
func benchPass(ctx context.Context, dbURL string, now time.Time) string {
	body, err := os.ReadFile(filepath.Join("adapters", "testdata", "novelfull", "ongoing.html"))
	if err != nil {
		return "healthy pass: " + err.Error()
	}
	ref, _ := adapters.RefFromPage("novelfull", body)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	defer site.Close()
	base, _ := url.Parse(site.URL)
	wc := &writeCounter{}
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return "healthy pass: " + err.Error()
	}
	store.Tune(cfg)
	cfg.ConnConfig.Tracer = wc
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return "healthy pass: " + err.Error()
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `INSERT INTO series (site, series_id, url, kind, created_at)
		SELECT 'novelfull', 'pass' || i, $1, 'novel', timestamptz 'epoch' FROM generate_series(1, 1000) i`, ref.URL); err != nil {
		return "healthy pass: " + err.Error()
	}
	reader := fetch.NewReader(fetch.ReaderOptions{BaseURLs: map[string]*url.URL{"novelfull": base}, BrowserSites: word.BrowserSites{}})
	clock := now
	p := poller.New(store.New(pool), reader, poller.Config{Now: func() time.Time { return clock }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Sites: []string{"novelfull"}})
	defer p.Close()
	clock = clock.Add(2 * time.Hour)
	p.RunPass(ctx, "novelfull") // learns the facts
	clock = clock.Add(2 * time.Hour)
	wc.writes.Store(0)
	wc.passLog.Store(0)
	start := time.Now()
	pass := p.RunPass(ctx, "novelfull")
	took := time.Since(start)
	return fmt.Sprintf("healthy pass of novelfull: %d due, %d checked in %s ms; writes per Poll: %.3f (budget 1), plus %d pass-log row",
		pass.Due, pass.Checked, ms(took), float64(wc.writes.Load())/float64(max(pass.Checked, 1)), wc.passLog.Load())
}
