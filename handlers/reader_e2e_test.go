package handlers_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/mangabookmark/mangabookmark/fetch"
	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/poller"
)

// novelStandIn is a NovelFull stand-in whose Series page lists chapters 1
// to latest; raising latest is the Site publishing a chapter.
func novelStandIn(t *testing.T, latest *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/uploads/ri.jpg" { // the cover: a PNG whatever its name says
			_, _ = w.Write(coverPNG(t))
			return
		}
		if r.URL.Path != "/reverend-insanity.html" {
			http.NotFound(w, r)
			return
		}
		var items strings.Builder
		for n := latest.Load(); n >= 1; n-- {
			fmt.Fprintf(&items, `<li><a href="/reverend-insanity/chapter-%d-part-%d.html" title="Chapter %d">Chapter %d</a></li>`, n, n, n, n)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>Reverend Insanity</title></head><body>
<div class="col-info-desc"><div class="info-holder"><div class="book"><img src="/uploads/ri.jpg" alt=""></div>
<div class="info"><div><h3>Status:</h3><a href="/status/Ongoing">Ongoing</a></div></div></div>
<div class="desc"><h3 class="title" itemprop="name">Reverend Insanity</h3></div></div>
<div id="list-chapter"><ul class="list-chapter">%s</ul></div></body></html>`, items.String())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// coverPNG is a cover-sized PNG in two colours, so a screenshot shows it.
func coverPNG(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 96, 136))
	for y := range 136 {
		for x := range 96 {
			img.Set(x, y, color.RGBA{R: uint8(40 + y), G: 90, B: uint8(200 - x), A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestAReaderAddsAChapterAddressAndFollowsTheEmberInARealBrowser is the
// Reader's end-to-end path: real Chromium, the real router, a real
// database, a real Lane polling a loopback stand-in of the Site.
func TestAReaderAddsAChapterAddressAndFollowsTheEmberInARealBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	browserURL := chromiumtest.Start(t, "--hide-scrollbars", "--window-size=1280,900").WSURL
	// A real clock: the Lane stamps real times, and a Forced Poll must be
	// later than the last check to count.
	h := newHarness(t, func(d *handlers.Deps) { d.Now = time.Now })
	var latest atomic.Int64
	latest.Store(3)
	site := novelStandIn(t, &latest)
	base, _ := url.Parse(site.URL)
	siteReader := fetch.NewReader(fetch.ReaderOptions{
		BaseURLs: map[string]*url.URL{"novelfull": base}, Timeout: browserWait,
	})
	lanes := poller.New(h.store.Lanes(), siteReader, poller.Config{
		Sites: []string{"novelfull"}, Covers: siteReader, Logger: slog.New(slog.DiscardHandler), // no spacing
	})
	lanesCtx, stopLanes := context.WithCancel(context.Background())
	lanesDone := make(chan struct{})
	go func() { defer close(lanesDone); lanes.Run(lanesCtx) }()
	t.Cleanup(func() { stopLanes(); <-lanesDone })

	shots := artifactsDir(t, "screenshots")
	allocCtx, owner := browserSession(t, browserURL)
	step := stepper(t)
	shot := func(tab context.Context, name string) {
		t.Helper()
		buf, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
		step("screenshot "+name, err)
		step("save "+name, os.WriteFile(filepath.Join(shots, name+".png"), buf, 0o644))
	}

	// The owner signs in and makes a sign-in link for Ada.
	link, err := handlers.NewLoginLink(owner, h.store, h.srv.URL, ownerID, time.Now())
	step("owner link", err)
	step("owner opens link", chromedp.Do(owner, chromedp.Navigate(link)))
	_, err = chromedp.RunResponse(owner, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("owner signs in", err)
	step("readers page", chromedp.Do(owner, chromedp.Navigate(h.srv.URL+"/admin/readers"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="reader-name"]`), "Ada")))
	_, err = chromedp.RunResponse(owner, chromedp.Click(chromedp.CSS(`[data-testid="create-reader-link"]`)))
	step("make Ada's link", err)
	adaLink, err := chromedp.Run(owner, chromedp.Evaluate[string](`document.querySelector('[data-testid="reader-link"]').textContent.trim()`))
	step("read Ada's link", err)
	shot(owner, "27-admin-readers-link")

	// Ada, in a browser context of her own, signs in with it.
	ada, cancelAda := chromedp.NewContext(allocCtx, chromedp.WithNewBrowserContext())
	defer cancelAda()
	step("Ada opens her link", chromedp.Do(ada, chromedp.Navigate(adaLink)))
	_, err = chromedp.RunResponse(ada, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("Ada signs in", err)
	step("Ada's home", chromedp.Do(ada, chromedp.WaitVisible(chromedp.CSS(`[data-testid="add-urls"]`))))

	// She pastes a chapter address; the add answers in place (htmx).
	step("paste", chromedp.Do(ada,
		chromedp.SendKeys(chromedp.CSS(`[data-testid="add-urls"]`), "https://novelfull.com/reverend-insanity/chapter-3-part-3.html"),
		chromedp.Click(chromedp.CSS(`[data-testid="add-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="add-result"][data-result="added"]`))))
	row := `[data-testid="bookmark"][data-site="novelfull"][data-series-id="reverend-insanity"]`
	// The Forced Poll the add asked for reads the stand-in: title, cover, Latest 3.
	waitRow := func(tab context.Context, what, cond string) {
		t.Helper()
		_, err := chromedp.Run(tab, chromedp.Poll[bool](`(async () => {
			const r = await fetch('/', {headers: {'HX-Request': 'true'}});
			const html = await r.text();
			const d = new DOMParser().parseFromString(html, 'text/html');
			const row = d.querySelector('`+row+`');
			return !!row && (`+cond+`);
		})()`, chromedp.WithPollingTimeout(2*browserWait), chromedp.WithPollingInterval(300*time.Millisecond)))
		step(what, err)
		step("reload", chromedp.Do(tab, chromedp.Navigate(h.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(row))))
	}
	waitRow(ada, "the first Poll fills the row", `row.querySelector('.title').textContent.includes('Reverend Insanity') && row.textContent.includes('Latest 3')`)
	// The Lane fetches the cover while it rests; the row then shows it from
	// our own origin, loaded.
	waitRow(ada, "the cover is kept", `!!row.querySelector('img[data-testid="cover"]')`)
	coverSrc, err := chromedp.Run(ada, chromedp.Poll[string](`(() => {
		const img = document.querySelector('`+row+` img[data-testid="cover"]');
		return img && img.complete && img.naturalWidth > 0 ? img.getAttribute('src') : null;
	})()`, chromedp.WithPollingTimeout(browserWait)))
	step("the cover loads", err)
	if !strings.HasPrefix(coverSrc, "/covers/novelfull/reverend-insanity?v=") {
		t.Errorf("the cover is not served from our origin: %q", coverSrc)
	}
	embers, err := chromedp.Run(ada, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="ember"]').length`))
	step("count embers", err)
	if embers != 0 {
		t.Fatalf("Progress 3 of Latest 3 shows %d embers", embers)
	}

	// The stand-in publishes chapter 4; the owner forces a Poll of the Series.
	latest.Store(4)
	step("owner opens the Series", chromedp.Do(owner, chromedp.Navigate(h.srv.URL+"/admin/series/novelfull/reverend-insanity"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="series-detail"]`))))
	_, err = chromedp.Run(owner, chromedp.Evaluate[bool](`(() => {
		const b = Array.from(document.querySelectorAll('#series-detail form button')).find(b => b.closest('form').action.endsWith('/poll'));
		if (b) b.click();
		return !!b;
	})()`))
	step("force a Poll", err)
	step("owner's add box", chromedp.Do(owner, chromedp.Navigate(h.srv.URL+"/admin/series"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="add-urls"]`), "https://novelfull.com/another-novel.html\nhttps://example.com/x"),
		chromedp.Click(chromedp.CSS(`[data-testid="add-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="add-result"][data-result="unsupported"]`))))
	shot(owner, "28-admin-series-add")
	waitRow(ada, "the ember lights", `!!row.querySelector('[data-testid="ember"]') && row.textContent.includes('Latest 4')`)
	next, err := chromedp.Run(ada, chromedp.Evaluate[string](`document.querySelector('`+row+` [data-testid="next"]').href`))
	step("read the next link", err)
	if next != "https://novelfull.com/reverend-insanity/chapter-4-part-4.html" {
		t.Errorf("next chapter link %q", next)
	}
	shot(ada, "20-reader-bookmarks-ember")

	// "Caught up" swaps the row alone and the ember goes out.
	// Caught up waits behind the row's disclosure (issue 23, item 10).
	step("caught up", chromedp.Do(ada, chromedp.Click(chromedp.CSS(row+` [data-testid="bookmark-more"] summary`)),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid="caught-up"]`)),
		chromedp.Click(chromedp.CSS(row+` [data-testid="caught-up"]`))))
	_, err = chromedp.Run(ada, chromedp.Poll[bool](`!document.querySelector('[data-testid="ember"]') && document.querySelector('`+row+` [data-testid="progress"]').textContent.includes('4')`,
		chromedp.WithPollingTimeout(browserWait)))
	step("the ember is out", err)
	shot(ada, "21-reader-bookmarks-caught-up")

	// Typing in the search swaps the list alone and pushes the address.
	step("search", chromedp.Do(ada, chromedp.SendKeys(chromedp.CSS(`[data-testid="filter-search"]`), "zzz")))
	_, err = chromedp.Run(ada, chromedp.Poll[bool](`!!document.querySelector('[data-testid="bookmarks-empty"]') && location.search === '?q=zzz' && !!document.querySelector('[data-testid="add-form"]')`,
		chromedp.WithPollingTimeout(browserWait)))
	step("the search narrows the list in place", err)

	// The tokens page, and both pages on a phone and in the dark scheme.
	step("tokens", chromedp.Do(ada, chromedp.Navigate(h.srv.URL+"/tokens"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="token-name"]`), "laptop Firefox")))
	_, err = chromedp.RunResponse(ada, chromedp.Click(chromedp.CSS(`[data-testid="create-token"]`)))
	step("create a token", err)
	step("token shown", chromedp.Do(ada, chromedp.WaitVisible(chromedp.CSS(`[data-testid="new-token"]`))))
	shot(ada, "22-reader-tokens")
	for _, scheme := range []string{"light", "dark"} {
		_, err = chromedp.Call(ada, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		step(scheme+" scheme", err)
		step("phone", chromedp.Do(ada, chromedp.EmulateViewport(390, 844), chromedp.Navigate(h.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(row))))
		shot(ada, "23-"+scheme+"-phone-bookmarks")
		wide, err := chromedp.Run(ada, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
		step("measure the phone list", err)
		if wide {
			t.Errorf("My Bookmarks scrolls sideways on a phone (%s)", scheme)
		}
		step("phone tokens", chromedp.Do(ada, chromedp.Navigate(h.srv.URL+"/tokens"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="token"]`))))
		shot(ada, "24-"+scheme+"-phone-tokens")
		step("desktop", chromedp.Do(ada, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(h.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(row))))
		shot(ada, "25-"+scheme+"-desktop-bookmarks")
		step("desktop tokens", chromedp.Do(ada, chromedp.Navigate(h.srv.URL+"/tokens"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="token"]`))))
		shot(ada, "26-"+scheme+"-desktop-tokens")
	}
	if err := allocCtx.Err(); errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("the browser test ran out of time")
	}
}
