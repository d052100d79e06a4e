package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/server"
	"github.com/mangabookmark/mangabookmark/store/localpg"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// demoRun is one demo under test: its world, its printout and a database
// connection to look at what it wrote.
type demoRun struct {
	t      *testing.T
	w      *demoWorld
	db     *pgx.Conn
	stdout *syncBuffer
	stderr *syncBuffer
	base   string
	done   chan error
}

// startDemo runs the demo on a fresh database with the script held back:
// the test plays each event itself, on the demo's clock.
func startDemo(t *testing.T) *demoRun {
	t.Helper()
	return startDemoWith(t, nil)
}

// startDemoWith is startDemo with the options tweak changes.
func startDemoWith(t *testing.T, tweak func(*demoOptions)) *demoRun {
	t.Helper()
	dbURL := storetest.URL(t)
	addr := freeAddr(t)
	env := map[string]string{"LISTEN_ADDR": addr, "DATA_DIR": t.TempDir(), "LOG_LEVEL": "warn"}
	ctx, cancel := context.WithCancel(context.Background())
	d := &demoRun{t: t, stdout: &syncBuffer{}, stderr: &syncBuffer{}, base: "http://" + addr, done: make(chan error, 1)}
	worlds := make(chan *demoWorld, 1)
	o := demoOptions{
		fixtures: "../../../adapters/testdata", database: dbURL, pace: 2 * time.Second,
		clock: &demoClock{}, started: func(w *demoWorld) { worlds <- w },
	}
	if tweak != nil {
		tweak(&o)
	}
	go func() { d.done <- playDemo(ctx, o, d.stdout, d.stderr, func(k string) string { return env[k] }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-d.done; err != nil {
			t.Errorf("the demo did not stop cleanly: %v", err)
		}
	})
	select {
	case d.w = <-worlds:
	case err := <-d.done:
		d.done <- err
		t.Fatalf("the demo stopped before it served: %v\n%s", err, d.stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("the demo did not start within 60 s\n%s", d.stderr.String())
	}
	db, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close(context.Background()) })
	d.db = db
	return d
}

// waitFor waits, within a bound, until cond holds; the bound is generous
// because the Lanes pass on their own schedule (no timing is asserted).
func (d *demoRun) waitFor(what string, cond func() (bool, string)) {
	d.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("%s: not within 90 s; last seen: %s\nstdout:\n%s\nstderr (tail):\n%s", what, state, d.stdout.String(), tail(d.stderr.String(), 3000))
		}
		time.Sleep(150 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// play applies the script's event by key.
func (d *demoRun) play(key string) {
	d.t.Helper()
	for _, e := range demoScript(d.w.sidecar != nil) {
		if e.Key == key {
			if err := d.w.apply(context.Background(), e); err != nil {
				d.t.Fatal(err)
			}
			return
		}
	}
	d.t.Fatalf("no event %q in the script", key)
}

func (d *demoRun) scalar(sql string, args ...any) string {
	d.t.Helper()
	var v *string
	if err := d.db.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil && err != pgx.ErrNoRows {
		d.t.Fatal(err)
	}
	if v == nil {
		return ""
	}
	return *v
}

// passLog is a Site's pass log, a line a pass, for a failure's last-seen
// state.
func (d *demoRun) passLog(site string) string {
	d.t.Helper()
	return d.scalar(`SELECT string_agg(format('%s due=%s checked=%s skip=%s refused=%s errors=%s', started_at, due, checked, skip, refused, errors), E'\n' ORDER BY started_at) FROM poll_passes WHERE site = $1`, site)
}

// embeds counts the sink's owner notices by footer word and Site in the
// title.
func (d *demoRun) embeds(kind, site string) int {
	n := 0
	for _, m := range d.w.sink.Messages() {
		if !m.Reader && m.Footer == kind && strings.Contains(m.Title+" "+m.Text, site) {
			n++
		}
	}
	return n
}

var linkLine = regexp.MustCompile(`(?m)^\s+(owner|Ada)\s+(http://\S+/login/\S+)$`)

// signIn spends the newest printed sign-in link of who and returns a client
// holding the session.
func (d *demoRun) signIn(who string) *http.Client {
	d.t.Helper()
	var link string
	for _, m := range linkLine.FindAllStringSubmatch(d.stdout.String(), -1) {
		if m[1] == who {
			link = m[2]
		}
	}
	if link == "" {
		d.t.Fatalf("no sign-in link for %s in:\n%s", who, d.stdout.String())
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(link, url.Values{})
	if err != nil {
		d.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		d.t.Fatalf("signing in as %s: %d, want 303 to the first page", who, resp.StatusCode)
	}
	c.CheckRedirect = nil
	return c
}

func (d *demoRun) page(c *http.Client, path string) *goquery.Document {
	d.t.Helper()
	resp, err := c.Get(d.base + path)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		d.t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, body)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	if err != nil {
		d.t.Fatal(err)
	}
	return doc
}

func (d *demoRun) seriesID(site, file string) string {
	d.t.Helper()
	s, err := d.w.sites[site].series(file)
	if err != nil {
		d.t.Fatal(err)
	}
	return s.Ref.SeriesID
}

// The whole script, event by event on the demo's clock: after each, the
// database, the sink's embeds (exactly one per episode, the right footer
// word and Site) and the rendered admin and Reader pages show what the
// timeline says.
func TestTheDemoScriptShowsEverySignal(t *testing.T) {
	t.Parallel()
	d := startDemo(t)
	sidecar := d.w.sidecar != nil

	d.waitFor("the refusing Site's notice on its first pass", func() (bool, string) {
		return d.embeds("no-browser-route", demoHostile) == 1, fmt.Sprint(d.w.sink.Messages())
	})
	published := map[string]string{}
	for _, p := range demoPublished {
		if p.site == "comix" && !sidecar {
			continue
		}
		id := d.seriesID(p.site, p.file)
		d.waitFor("a first Latest Chapter for "+p.site, func() (bool, string) {
			v := d.scalar(`SELECT latest_chapter_num::text FROM series WHERE site = $1 AND series_id = $2`, p.site, id)
			return v != "", v
		})
		published[p.site] = id
	}
	owner, ada := d.signIn("owner"), d.signIn("Ada")
	embers := func() int { return d.page(ada, "/").Find(`[data-testid="ember"]`).Length() }
	before := embers()

	d.play("publish")
	d.waitFor("Ada's embers for the new chapters", func() (bool, string) {
		n := embers()
		return n >= before+len(published), fmt.Sprintf("%d embers, %d before", n, before)
	})

	taken := d.seriesID(demoTakenSite, demoTakenFile)
	d.play("take-down")
	d.waitFor("a not_found row", func() (bool, string) {
		v := d.scalar(`SELECT outcome FROM poll_failures WHERE site = $1 AND series_id = $2`, demoTakenSite, taken)
		return v == "not_found", v
	})

	completed := d.seriesID(demoCompletedSite, demoCompletedFile)
	d.play("complete")
	d.waitFor("the completion hint", func() (bool, string) {
		v := d.scalar(`SELECT (site_completed_at IS NOT NULL)::text FROM series WHERE site = $1 AND series_id = $2`, demoCompletedSite, completed)
		return v == "true", v
	})
	if n := d.page(owner, "/admin/series?filter=site-completed").Find(`[data-series-id="` + completed + `"]`).Length(); n == 0 {
		t.Errorf("the site-completed list does not show %s/%s", demoCompletedSite, completed)
	}

	d.play("sighting")
	d.waitFor("the Sighting's number on its Series", func() (bool, string) {
		v := d.scalar(`SELECT latest_raised_by FROM series WHERE site = $1 AND series_id = $2`, demoSightedSite, d.seriesID(demoSightedSite, demoSightedFile))
		return v == demoReaders[0].ID, v
	})

	d.play("relayout")
	d.play("quiet")
	if sidecar {
		d.play("sidecar-stop")
	}
	d.waitFor("no_chapter on every "+demoRelaidSite+" Series", func() (bool, string) {
		v := d.scalar(`SELECT count(*)::text FROM poll_failures WHERE site = $1 AND outcome = 'no_chapter'`, demoRelaidSite)
		return v == fmt.Sprint(len(d.w.sites[demoRelaidSite].Series)), v
	})
	d.waitFor("a stall pass of "+demoQuietSite, func() (bool, string) {
		v := d.scalar(`SELECT count(*)::text FROM poll_passes WHERE site = $1 AND skip = '' AND due > 0 AND checked = 0 AND refused = 0`, demoQuietSite)
		return v != "0", v
	})

	d.play("skip")
	d.waitFor("one embed each for the faults past ownerWindow", func() (bool, string) {
		ok := d.embeds("adapter-broken", demoRelaidSite) == 1 && d.embeds("stall", demoQuietSite) == 1
		if sidecar {
			ok = ok && d.embeds("sidecar-down", "") == 1
		}
		// The stall needs an unbroken run of stall passes across the skip:
		// the pass log shows where one broke.
		return ok, fmt.Sprintf("%v\n%s passes:\n%s", d.w.sink.Messages(), demoQuietSite, d.passLog(demoQuietSite))
	})
	verdict := d.page(owner, "/admin").Find(`[data-testid="verdict"]`).Text()
	for _, want := range []string{demoRelaidSite, demoQuietSite, demoHostile} {
		if !strings.Contains(verdict, want) {
			t.Errorf("the verdict line does not name %s: %q", want, verdict)
		}
	}
	if n := d.page(owner, "/admin/series?filter=failing").Find(`[data-series-id="` + taken + `"]`).Length(); n == 0 {
		t.Errorf("the failing list does not show the taken-down Series after 13 hours")
	}
	if n := d.page(owner, "/admin/series?filter=unverified").Find(`[data-series-id="` + taken + `"]`).Length(); n == 0 {
		t.Errorf("the unverified list does not show the Series whose reported number no Poll confirms")
	}
	if d.page(owner, "/admin/demo/notices").Find(`[data-testid="demo-notice"]`).Length() < 3 {
		t.Errorf("the demo's notices page lists fewer than the three embeds received")
	}

	d.play("recover")
	d.waitFor("the recovered conditions' notices closed and the not_found row cleared", func() (bool, string) {
		v := d.scalar(`SELECT string_agg(kind || ':' || site, ',' ORDER BY kind) FROM owner_notices`)
		gone := d.scalar(`SELECT count(*)::text FROM poll_failures WHERE site = $1 AND series_id = $2`, demoTakenSite, taken)
		return v == "no-browser-route:"+demoHostile && gone == "0", v + " not_found rows " + gone
	})

	d.play("quiet-again")
	d.waitFor("a new stall run", func() (bool, string) {
		v := d.scalar(`SELECT (skip = '' AND due > 0 AND checked = 0 AND refused = 0)::text FROM poll_passes WHERE site = $1 ORDER BY started_at DESC LIMIT 1`, demoQuietSite)
		return v == "true", v
	})
	d.play("skip-again")
	d.waitFor("a second stall embed for the second episode", func() (bool, string) {
		return d.embeds("stall", demoQuietSite) == 2, fmt.Sprint(d.w.sink.Messages())
	})
	d.play("answer-again")
	d.shoot(owner, map[string]string{"admin": "/admin", "notices": "/admin/demo/notices"})

	// Exactly one embed per episode, nothing else.
	want := map[string]int{"no-browser-route": 1, "adapter-broken": 1, "stall": 2}
	if sidecar {
		want["sidecar-down"] = 1
	}
	got := map[string]int{}
	for _, m := range d.w.sink.Messages() {
		if !m.Reader {
			got[m.Footer]++
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("embeds by footer word = %v, want %v: %v", got, want, d.w.sink.Messages())
	}
}

// `make demo`'s own command: the demo's own local cluster under DATA_DIR,
// the guide printed, /healthz answering; on Ctrl-C (the context) every
// process and port it opened is gone, and so is its data, wherever the
// guide said it was (as root, the cluster lives outside a closed DATA_DIR:
// issue 23, item 9).
func TestTheDemoCommandStartsWithItsGuideAndStopsEverything(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	dataDir := t.TempDir()
	env := map[string]string{"LISTEN_ADDR": addr, "DATA_DIR": dataDir, "DATABASE_URL": "postgres://must-not-be-used.invalid/x"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, []string{"--fixtures", "../../../adapters/testdata"}, nil, &stdout, &stderr, func(k string) string { return env[k] })
	}()
	deadline := time.Now().Add(180 * time.Second) // a local cluster's first start, on a loaded machine
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("the demo stopped: %v\n%s\n%s", err, stdout.String(), stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no /healthz within 180 s\n%s\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The sign-in links and Ada's feed address follow /healthz: the server
	// answers before its ready hook has printed them.
	for !strings.Contains(stdout.String(), "her private feed (Atom)") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	guide := stdout.String()
	cluster, err := localpg.Where(server.LocalCluster(filepath.Join(dataDir, "demo")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cluster, "PG_VERSION")); err != nil {
		t.Errorf("the cluster is not where the guide says: %v", err)
	}
	for _, want := range []string{
		"everything runs on this machine's loopback",
		"the demo's own cluster in " + cluster + ", removed when the demo ends\n",
		"e.g. DATA_DIR=" + filepath.Join(dataDir, "demo") + " ./bin/mangabookmark notices\n",
		"owner notice [<word>]",
		"demo timeline (minutes after the start):",
		"The clock skips 13 hours",
		"  owner  http://" + addr + "/login/",
		"  Ada    http://" + addr + "/login/",
		"demo: Ada has Discord mentions and the feed on; her private feed (Atom): http://" + addr + "/feeds/",
		"reader announcement: Ada mentioned",
	} {
		if !strings.Contains(guide, want) {
			t.Errorf("the guide lacks %q:\n%s", want, guide)
		}
	}
	var ports []string
	for _, m := range regexp.MustCompile(`(?m)^  stand-in\s+\S+\s+http://(\S+)$`).FindAllStringSubmatch(guide, -1) {
		ports = append(ports, m[1])
	}
	if m := regexp.MustCompile(`sidecar\s+headless Chromium on ws://(\S+) `).FindStringSubmatch(guide); m != nil {
		ports = append(ports, m[1])
	}
	if len(ports) < 6 {
		t.Fatalf("the guide names %d stand-in addresses, want six:\n%s", len(ports), guide)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the demo did not stop cleanly: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the demo did not stop within 60 s of Ctrl-C")
	}
	for _, p := range append(ports, addr) {
		if c, err := net.DialTimeout("tcp", p, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still answers after the demo stopped", p)
		}
	}
	for _, p := range []string{cluster, filepath.Join(dataDir, "demo"), filepath.Join(dataDir, "demo.lock")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left after the demo stopped without --keep (%v)", p, err)
		}
	}
	if !strings.Contains(stdout.String(), "demo: removed its data in "+filepath.Join(dataDir, "demo")) {
		t.Errorf("the demo's last line does not say its data was removed:\n%s", stdout.String())
	}
}

// shoot saves each page, as the signed-in client sees it, at desktop and
// phone widths in both schemes, under artifacts/demo (kept by CI, never
// committed).
func (d *demoRun) shoot(c *http.Client, pages map[string]string) {
	d.t.Helper()
	browser := chromiumtest.Start(d.t, "--hide-scrollbars")
	dir := filepath.Join("..", "..", "..", "artifacts", "demo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		d.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	allocCtx, cancelAlloc := remote.NewAllocator(ctx, browser.WSURL)
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()
	u, _ := url.Parse(d.base)
	for _, ck := range c.Jar.Cookies(u) {
		if _, err := chromedp.Call(tab, network.SetCookie, network.SetCookieParams{Name: ck.Name, Value: ck.Value, URL: d.base}); err != nil {
			d.t.Fatal(err)
		}
	}
	for name, path := range pages {
		for _, scheme := range []string{"light", "dark"} {
			for _, v := range []struct {
				w, h int64
				kind string
			}{{1280, 900, "desktop"}, {390, 844, "phone"}} {
				_, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
					Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
				if err == nil {
					err = chromedp.Do(tab, chromedp.EmulateViewport(v.w, v.h), chromedp.Navigate(d.base+path), chromedp.WaitVisible(chromedp.CSS("main")))
				}
				if err == nil {
					// The covers load lazily, and the full-page shot shows
					// rows below the fold: load them all before the shot.
					_, err = chromedp.Run(tab, chromedp.Evaluate[bool](`document.querySelectorAll('img[loading=lazy]').forEach(i => i.loading = 'eager'), true`))
				}
				if err == nil {
					_, err = chromedp.Run(tab, chromedp.Poll[bool](`Array.from(document.images).every(i => i.complete)`, chromedp.WithPollingTimeout(20*time.Second)))
				}
				var buf []byte
				if err == nil {
					buf, err = chromedp.Run(tab, chromedp.FullScreenshot(100))
				}
				if err == nil {
					err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%s-%s.png", name, v.kind, scheme)), buf, 0o644)
				}
				if err != nil {
					d.t.Fatalf("screenshot of %s: %v", path, err)
				}
			}
		}
	}
}

// The reading room runs the real userscript in a plain browser: reading a
// chapter to its end records Ben's Progress; with the server away the next
// chapter's Progress waits as `⟳ 1 pending`, and reaches the server once it
// is back.
func TestTheDemoReadingRoomRecordsProgressAndKeepsItWhileTheServerIsAway(t *testing.T) {
	t.Parallel()
	d := startDemo(t)
	m := regexp.MustCompile(`the reading room \(.*\): (http://\S+/reading-room/)(\d+)`).FindStringSubmatch(d.stdout.String())
	if m == nil {
		t.Fatalf("the guide names no reading room:\n%s", d.stdout.String())
	}
	room, start := m[1], m[2]
	rd := demoRoomReader()
	series := d.seriesID(demoRoomSite, demoRoomFile)
	progress := func() string {
		return d.scalar(`SELECT progress_num::text FROM bookmarks WHERE reader_id = $1 AND site = $2 AND series_id = $3`, rd.ID, demoRoomSite, series)
	}

	browser := chromiumtest.Start(t, "--hide-scrollbars")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	allocCtx, cancelAlloc := remote.NewAllocator(ctx, browser.WSURL)
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	panel := func(what, test string) {
		t.Helper()
		var err error
		for range 5 { // a poll that meets a navigation (the switch's redirect) starts again
			_, err = chromedp.Run(tab, chromedp.Poll[bool](`(() => { const p = document.querySelector('mangabookmark-panel'); const t = p && p.shadowRoot ? p.shadowRoot.textContent : ''; return `+test+`; })()`,
				chromedp.WithPollingTimeout(30*time.Second)))
			if err == nil || !strings.Contains(err.Error(), "navigated") && !strings.Contains(err.Error(), "context with specified id") {
				break
			}
		}
		step(what, err)
	}
	read := func(n string) {
		t.Helper()
		step("open chapter "+n, chromedp.Do(tab, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(room+n)))
		panel("the panel on chapter "+n, `t.length > 0`)
		_, err := chromedp.Run(tab, chromedp.Evaluate[bool](`window.scrollTo(0, document.documentElement.scrollHeight), true`))
		step("read chapter "+n+" to its end", err)
	}

	// The demo's clock skips 26 hours, as its script does, before Ben reads.
	for range 2 {
		step("skip the clock", d.w.skip(ctx))
	}
	read(start)
	d.waitFor("Ben's Progress at chapter "+start, func() (bool, string) { v := progress(); return v == start, v })
	// Reading through the userscript is being seen, on the demo's clock
	// (issue 23: "last seen 26 hours ago" right after the reading room).
	if seen := d.scalar(`SELECT coalesce(last_seen_at > $2::timestamptz - interval '5 minutes', false)::text FROM readers WHERE discord_id = $1`,
		rd.ID, d.w.clock.Now()); seen != "true" {
		t.Errorf("Ben read in the reading room and is not seen on the demo's clock (recent: %s)", seen)
	}

	step("take the server away", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`form button`))))
	panel("the page after the switch", `document.body.textContent.includes('The server is away') && t.length > 0`)
	next := fmt.Sprint(mustAtoi(t, start) + 1)
	read(next)
	panel("the panel says one write is pending", `t.includes('1 pending')`)
	if v := progress(); v != start {
		t.Fatalf("Progress moved to %s while the server was away", v)
	}
	dir := filepath.Join("..", "..", "..", "artifacts", "demo")
	step("artifacts", os.MkdirAll(dir, 0o755))
	for _, v := range []struct {
		w, h int64
		kind string
	}{{1280, 800, "desktop"}, {390, 844, "phone"}} {
		step("viewport", chromedp.Do(tab, chromedp.EmulateViewport(v.w, v.h)))
		panel("the panel after the resize", `t.includes('1 pending')`)
		buf, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
		step("screenshot", err)
		step("save", os.WriteFile(filepath.Join(dir, "reading-room-pending-"+v.kind+".png"), buf, 0o644))
	}
	step("desktop again", chromedp.Do(tab, chromedp.EmulateViewport(1280, 800)))
	step("bring the server back", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`form button`))))
	panel("the page after the switch", `document.body.textContent.includes('The server is reachable') && t.length > 0`)
	panel("the queue drains", `!t.includes('pending')`)
	d.waitFor("Ben's Progress at chapter "+next+" once the server is back", func() (bool, string) { v := progress(); return v == next, v })
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
