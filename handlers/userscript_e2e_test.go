package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/static"
	"github.com/mangabookmark/mangabookmark/store"
)

// standInAsura serves a Series page and chapters 1..latest of one Series the
// way a Site's pages look to the userscript: a chapter list, a tall reading
// area, a link to the next chapter. It is reached as https://asurascans.com
// through Chromium's host mapping, so the script sees the Site's real address.
func standInAsura(latest int) *httptest.Server {
	return httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var list strings.Builder
		for n := 1; n <= latest; n++ {
			fmt.Fprintf(&list, `<li><a href="/comics/nano-machine-7f873ca6/chapter/%d">Chapter %d</a></li>`, n, n)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/comics/nano-machine-7f873ca6/chapter/%d", &n); err != nil {
			// The Series page: a light look.
			fmt.Fprintf(w, `<!doctype html><html><head><title>Nano Machine</title><meta name="viewport" content="width=device-width"></head>
<body style="margin:0;font:16px sans-serif;background:#f4f1ea;color:#222"><header style="padding:16px;background:#fff">Asura Scans</header>
<main style="padding:16px"><h1>Nano Machine</h1><p>Cheon Yeo-Woon, an orphan of the Demonic Cult…</p><ul>%s</ul></main></body></html>`, list.String())
			return
		}
		next := ""
		if n < latest {
			next = fmt.Sprintf(`<a data-testid="next" href="/comics/nano-machine-7f873ca6/chapter/%d" style="display:block;padding:24px;color:#fc6">Next chapter</a>`, n+1)
		}
		// A chapter page: dark, as reading pages are.
		fmt.Fprintf(w, `<!doctype html><html><head><title>Nano Machine Chapter %d</title><meta name="viewport" content="width=device-width"></head>
<body style="margin:0;font:16px sans-serif;background:#16151a;color:#ddd"><header style="padding:12px">Nano Machine · Chapter %d<details><summary>Chapters</summary><ul>%s</ul></details></header>
<main style="max-width:720px;margin:0 auto"><div style="height:5000px;background:linear-gradient(#333,#555)">page images</div>%s</main></body></html>`, n, n, list.String(), next)
	}))
}

// restartable is the real router on a fixed loopback address that can be
// stopped and started again, as a server that goes away and comes back.
type restartable struct {
	t       *testing.T
	addr    string
	handler http.Handler
	srv     *http.Server
}

// listen binds the address (the first time, any free loopback port).
func (s *restartable) listen() net.Listener {
	s.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port was just released; the kernel may hold it a moment
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			s.addr = ln.Addr().String()
			return ln
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatal(err)
	return nil
}

func (s *restartable) serve(ln net.Listener) {
	s.srv = &http.Server{Handler: s.handler}
	go func() { _ = s.srv.Serve(ln) }()
}

func (s *restartable) start() { s.serve(s.listen()) }

func (s *restartable) stop() { _ = s.srv.Close() }

// TestTheUserscriptRecordsProgressAndLosesNoneWhileTheServerIsAway is the
// userscript's one end-to-end test: the served script in a real Chromium, on
// a stand-in Site page at the Site's own address, under a GM shim whose
// storage outlives page loads, against the real router and database.
func TestTheUserscriptRecordsProgressAndLosesNoneWhileTheServerIsAway(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	site := standInAsura(7)
	defer site.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(site.URL, "https://"))
	browser := chromiumtest.Start(t, "--host-resolver-rules=MAP asurascans.com 127.0.0.1:"+port,
		"--ignore-certificate-errors", "--hide-scrollbars", "--window-size=1280,800")

	h := newHarness(t)
	ctx := context.Background()
	const reader = "reader-1"
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	step("reader", h.store.UpsertReader(ctx, store.Reader{DiscordID: reader, Name: "Rin"}, t0))

	api := &restartable{t: t, addr: "127.0.0.1:0"}
	ln := api.listen()
	deps := h.deps
	deps.PublicBaseURL = "http://" + api.addr
	api.handler = handlers.NewServer(deps)
	api.serve(ln)
	defer func() { api.stop() }()
	us, err := static.RenderUserscript(deps.PublicBaseURL)
	step("render the userscript", err)

	shots := filepath.Join("..", "artifacts", "userscript")
	step("artifacts", os.MkdirAll(shots, 0o755))
	bctx, cancel := context.WithTimeout(ctx, browserBudget)
	defer cancel()
	allocCtx, cancelAlloc := remote.NewAllocator(bctx, browser.WSURL)
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()
	gm := newGMShim(t)
	step("attach the GM shim", gm.attach(tab))
	runScript := func() {
		t.Helper()
		_, err := chromedp.Run(tab, chromedp.Evaluate[bool](gmShimJS+"\n"+string(us.Script)+"\ntrue"))
		step("run the userscript", err)
	}

	shot := func(name string) {
		t.Helper()
		for _, v := range []struct {
			suffix string
			w, h   int64
			mobile bool
		}{{"desktop", 1280, 800, false}, {"phone", 390, 844, true}} {
			_, err := chromedp.Run(tab, chromedp.EmulateViewport(v.w, v.h, func(p *emulation.SetDeviceMetricsOverrideParams, _ *emulation.SetTouchEmulationEnabledParams) {
				p.Mobile = v.mobile
			}))
			step("viewport", err)
			buf, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
			step("screenshot", err)
			step("save", os.WriteFile(filepath.Join(shots, name+"-"+v.suffix+".png"), buf, 0o644))
		}
		_, err := chromedp.Run(tab, chromedp.EmulateViewport(1280, 800))
		step("viewport", err)
	}
	// The Reader signs in, creates a token on /tokens, and the userscript —
	// which runs there too — stores it with its button.
	link, err := handlers.NewLoginLink(ctx, h.store, deps.PublicBaseURL, reader, t0)
	step("sign-in link", err)
	step("open the link", chromedp.Do(tab, chromedp.Navigate(link)))
	_, err = chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("sign in", err)
	step("tokens", chromedp.Do(tab, chromedp.Navigate(deps.PublicBaseURL+"/tokens"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="token-name"]`), "e2e browser")))
	_, err = chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(`[data-testid="create-token"]`)))
	step("create a token", err)
	runScript()
	step("the button appears", chromedp.Do(tab, chromedp.WaitVisible(chromedp.CSS(`[data-testid="use-token"]`))))
	shot("00-tokens-use-this-token")
	shown, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('[data-testid="new-token"]').textContent.trim()`))
	step("read the new token", err)
	step("use it", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`[data-testid="use-token"]`))))
	var stored string
	for i := 0; !gm.value("token", &stored) || stored != shown; i++ {
		if i == pollTries {
			t.Fatalf("the userscript stored %q, the page showed %q", stored, shown)
		}
		time.Sleep(100 * time.Millisecond)
	}
	tokens, err := h.store.ListTokens(ctx, reader)
	step("list tokens", err)
	if len(tokens) != 1 || !strings.HasPrefix(shown, "mbk_") {
		t.Fatalf("tokens %+v, shown %q", tokens, shown)
	}

	// open loads a page and runs the served script on it, as a manager does
	// at document-idle, then waits for the panel.
	open := func(path string) {
		t.Helper()
		step("open "+path, chromedp.Do(tab, chromedp.Navigate("https://asurascans.com"+path)))
		runScript()
		_, err := chromedp.Run(tab, chromedp.Poll[bool](`!!document.querySelector('mangabookmark-panel')?.shadowRoot?.querySelector('button')`,
			chromedp.WithPollingTimeout(browserWait)))
		step("the panel appears", err)
	}
	// panelWaits waits until the panel's text satisfies a JavaScript test of t.
	panelWaits := func(what, test string) string {
		t.Helper()
		text, err := chromedp.Run(tab, chromedp.Poll[string](`(() => { const t = document.querySelector('mangabookmark-panel').shadowRoot.textContent; return (`+test+`) ? t : null; })()`,
			chromedp.WithPollingTimeout(browserWait)))
		if err != nil {
			got, _ := chromedp.Run(tab, chromedp.Evaluate[string](`[...(document.querySelector('mangabookmark-panel')?.shadowRoot?.childNodes ?? [])].filter((n) => n.nodeName !== 'STYLE').map((n) => n.textContent).join(' ')`))
			var q any
			gm.value("queue", &q)
			got += fmt.Sprintf(" (queue %v)", q)
			t.Fatalf("%s: %v (the panel reads %q)", what, err, got)
		}
		return text
	}
	click := func(testid string) {
		t.Helper()
		_, err := chromedp.Run(tab, chromedp.Evaluate[bool](`document.querySelector('mangabookmark-panel').shadowRoot.querySelector('[data-testid="`+testid+`"]').click(), true`))
		step("click "+testid, err)
	}
	readToTheEnd := func() {
		t.Helper()
		_, err := chromedp.Run(tab, chromedp.Evaluate[bool](`window.scrollTo(0, document.documentElement.scrollHeight), true`))
		step("scroll to the end", err)
	}
	progress := func() string {
		t.Helper()
		var p string
		err := h.pool.QueryRow(ctx, `SELECT coalesce(progress_num::text, 'none') FROM bookmarks WHERE reader_id = $1 AND site = 'asurascans' AND series_id = 'nano-machine'`, reader).Scan(&p)
		if errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		if err != nil {
			return "no bookmark"
		}
		return p
	}
	waitProgress := func(want string) {
		t.Helper()
		for range pollTries {
			if progress() == want {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		var q any
		gm.value("queue", &q)
		gm.mu.Lock()
		reqs := fmt.Sprintf("%+v", gm.requests)
		gm.mu.Unlock()
		t.Fatalf("Progress in the database is %s, want %s; queue %+v; requests %s", progress(), want, q, reqs)
	}

	// The Series page: not bookmarked yet; the panel's button bookmarks it.
	open("/comics/nano-machine-7f873ca6")
	panelWaits("the Series is not bookmarked", `t.includes('Not bookmarked')`)
	shot("01-series-not-bookmarked")
	click("mb-bookmark-button")
	waitProgress("none")
	panelWaits("the panel says Bookmarked", `t.includes('Bookmarked') && !t.includes('Not bookmarked')`)

	// Chapter 5, opened while the server is slow to say what it knows of
	// the Series: nothing is recorded for a chapter merely opened, and the
	// next chapter's link is followed before the server has answered.
	gm.answerLate("/api/v1/lookup", time.Second)
	step("open chapter 5", chromedp.Do(tab, chromedp.Navigate("https://asurascans.com/comics/nano-machine-7f873ca6/chapter/5")))
	runScript()
	_, err = chromedp.Run(tab, chromedp.Poll[bool](`!!document.querySelector('mangabookmark-panel')`, chromedp.WithPollingTimeout(browserWait)))
	step("the panel's host appears", err)
	gm.answerLate("", 0)
	if p := progress(); p != "none" {
		t.Fatalf("opening chapter 5 recorded Progress %s", p)
	}
	// The chapter list the Series page showed went out as a Sighting once the
	// Series existed: Latest Chapter 7 on the Reader's row, raised by the
	// Reader (no Poll has read this page, so it counts for them only:
	// CONTEXT.md, Sighting).
	var latest, raisedBy string
	for range pollTries {
		if b, err := h.store.GetBookmark(ctx, reader, "asurascans", "nano-machine"); err == nil && b.LatestChapter != nil {
			latest, raisedBy = *b.LatestChapter, b.RaisedBy
		}
		if latest == "7" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if latest != "7" || raisedBy != reader {
		t.Fatalf("after the chapter list was seen, Latest Chapter is %q raised by %q", latest, raisedBy)
	}
	// Following the next chapter's link records chapter 5 as read, though
	// the lookup has not answered yet.
	_, err = chromedp.Run(tab, chromedp.Evaluate[bool](`document.querySelector('[data-testid="next"]').click(), true`))
	step("follow the next chapter", err)
	// The click leaves the page once the Progress is stored; the page being
	// replaced interrupts any evaluation meanwhile, so ask until it answers.
	for i := 0; ; i++ {
		if path, err := chromedp.Run(tab, chromedp.Evaluate[string](`location.pathname`)); err == nil && strings.HasSuffix(path, "/chapter/6") {
			break
		}
		if i == pollTries {
			t.Fatal("following the next chapter's link did not open chapter 6")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The manager runs the script on the page that opened, as on every page.
	// The write was queued before the page left; if it had not reached the
	// server in the click's moment (a busy machine), this page sends it.
	runScript()
	waitProgress("5")

	// The server goes away; chapter 6 is read; the write waits, and says so.
	open("/comics/nano-machine-7f873ca6/chapter/6")
	api.stop()
	readToTheEnd()
	// The Progress of chapter 6 waits in the queue (a Sighting of the
	// chapter list may wait beside it: a page that left before noting its
	// Sighting as sent sends it again, which the server takes once).
	panelWaits("the write is pending", `/⟳ \d+ pending/.test(t)`)
	type entry struct {
		Kind    string `json:"kind"`
		Chapter any    `json:"chapter"`
	}
	var queued []entry
	gm.value("queue", &queued)
	if !slices.ContainsFunc(queued, func(e entry) bool { return e.Kind == "progress" && fmt.Sprint(e.Chapter) == "6" }) {
		t.Fatalf("the queue holds %+v, not chapter 6's Progress", queued)
	}
	shot("02-chapter-pending")
	click("mb-expand")
	panelWaits("the expanded panel shows the pending write", `/⟳ \d+ pending/.test(t)`)
	shot("03-chapter-pending-expanded")
	if p := progress(); p != "5" {
		t.Fatalf("Progress moved to %s while the server was stopped", p)
	}
	// A page load while the server is away reads from the cache and says so.
	open("/comics/nano-machine-7f873ca6/chapter/6")
	panelWaits("a chapter page opens collapsed, offline and pending", `t.includes('offline') && /⟳ \d+ pending/.test(t) && !t.includes('Bookmarked')`)
	click("mb-expand")
	panelWaits("the panel reads the cache, offline", `t.includes('offline · as of') && t.includes('Bookmarked') && /⟳ \d+ pending/.test(t)`)
	shot("04-chapter-offline")

	// Scrolling down mid-chapter, the panel steps aside; scrolling up brings it back.
	_, err = chromedp.Run(tab, chromedp.Evaluate[bool](`window.scrollTo(0, 0); true`))
	step("to the top", err)
	_, err = chromedp.Run(tab, chromedp.Evaluate[bool](`window.scrollTo(0, 1500); true`))
	step("read on", err)
	_, err = chromedp.Run(tab, chromedp.Poll[bool](`document.querySelector('mangabookmark-panel').hasAttribute('data-reading') && !!document.querySelector('mangabookmark-panel').shadowRoot.querySelector('[data-testid="mb-expand"]')`,
		chromedp.WithPollingTimeout(browserWait)))
	step("the panel collapses and steps aside while the Reader reads on", err)
	_, err = chromedp.Run(tab, chromedp.Evaluate[bool](`window.scrollTo(0, 500); true`))
	step("scroll back", err)
	_, err = chromedp.Run(tab, chromedp.Poll[bool](`!document.querySelector('mangabookmark-panel').hasAttribute('data-reading')`, chromedp.WithPollingTimeout(browserWait)))
	step("the panel is back on scrolling up", err)

	// The server comes back; the next page load drains the queue.
	api.start()
	open("/comics/nano-machine-7f873ca6/chapter/6")
	waitProgress("6")
	panelWaits("nothing is pending any more", `!t.includes('pending')`)
	var queue []map[string]any
	gm.value("queue", &queue)
	if len(queue) != 0 {
		t.Fatalf("the queue still holds %v", queue)
	}
	// Chapter 6's write was queued while the server was away and sent when it
	// was back: every attempt under one Idempotency-Key, and one answer.
	// The shim records a send once its answer is read; on a loaded machine
	// the page may show the write done a moment before the last record is
	// read here, so the record is waited for, not assumed.
	var keys map[string]bool
	var tried, answered int
	var statuses []int
	for deadline := time.Now().Add(browserWait); ; time.Sleep(50 * time.Millisecond) {
		keys, tried, answered, statuses = map[string]bool{}, 0, 0, nil
		for _, r := range gm.sent() {
			if r.URL == deps.PublicBaseURL+"/api/v1/progress" && r.Data != nil && strings.Contains(*r.Data, `"chapter":6`) {
				keys[r.Headers["Idempotency-Key"]] = true
				statuses = append(statuses, r.Status)
				tried++
				if r.Status == http.StatusOK {
					answered++
				}
			}
		}
		if answered > 0 || time.Now().After(deadline) {
			break
		}
	}
	// A try while the server was away is usual but not certain: a script
	// that already saw the server gone queues the write without trying it
	// (the queue and the pending panel are checked above).
	if len(keys) != 1 || tried < 1 || answered != 1 {
		t.Errorf("chapter 6's Progress was tried %d times (statuses %v) under keys %v and answered %d times, want every try under one key and one answer", tried, statuses, keys, answered)
	}
	var bookmarks int
	step("count", h.pool.QueryRow(ctx, `SELECT count(*) FROM bookmarks WHERE reader_id = $1`, reader).Scan(&bookmarks))
	if bookmarks != 1 {
		t.Fatalf("%d Bookmarks, want 1", bookmarks)
	}
	for _, r := range gm.sent() {
		if !r.Anonymous || r.Headers["X-Userscript-Version"] != static.UserscriptVersion() || !strings.HasPrefix(r.URL, deps.PublicBaseURL+"/api/v1/") {
			t.Errorf("a request went out as %+v", r)
		}
		if r.Method == http.MethodPost && r.Headers["Idempotency-Key"] == "" {
			t.Errorf("a write went out without an Idempotency-Key: %s", r.URL)
		}
	}

	// A single-page Site moves to chapter 7 without loading a page: the
	// script follows the address, and reading it records 7.
	_, err = chromedp.Run(tab, chromedp.Evaluate[bool](`window.scrollTo(0, 0); history.pushState({}, '', '/comics/nano-machine-7f873ca6/chapter/7'); document.title = 'Nano Machine Chapter 7'; true`))
	step("move within the page", err)
	for i := 0; progress() != "7"; i++ {
		if i == pollTries {
			t.Fatalf("after moving to chapter 7 in place and reading it, Progress is %s", progress())
		}
		_, err := chromedp.Run(tab, chromedp.Evaluate[bool](`window.scrollTo(0, 0); window.scrollTo(0, document.documentElement.scrollHeight), true`))
		step("read chapter 7", err)
		time.Sleep(100 * time.Millisecond)
	}

	// A revoked token: the panel says to set a new one, and nothing is retried.
	step("revoke", h.store.RevokeToken(ctx, reader, tokens[0].ID))
	open("/comics/nano-machine-7f873ca6/chapter/6")
	msg := panelWaits("the 401 message", `t.includes('/tokens') && t.includes('new one')`)
	if !strings.Contains(msg, deps.PublicBaseURL+"/tokens") {
		t.Errorf("the message does not name the tokens page: %q", msg)
	}
	if n, _ := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelector('mangabookmark-panel').shadowRoot.querySelectorAll('[data-testid="mb-bookmark-button"]').length`)); n != 0 {
		t.Error("with a refused token the panel still offers to bookmark")
	}
	shot("05-token-refused")
}
