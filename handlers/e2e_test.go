package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// The end-to-end tests' bounds are sized for a loaded 2-core CI machine, where
// one Chromium shares the cores with the other packages' tests: browserWait for
// one condition to come true (each wait polls, so a passing run never waits it
// out), browserBudget for a whole test's browser session, pollTries for a
// loop that asks every 100 ms (browserWait's worth).
const (
	browserWait   = 30 * time.Second
	browserBudget = 4 * time.Minute
	pollTries     = int(browserWait / (100 * time.Millisecond))
)

// browserSession is one test's session on its Chromium at wsURL, bounded by
// browserBudget: the allocator (for more tabs) and a first tab. Both close
// with the test.
func browserSession(t *testing.T, wsURL string) (alloc, tab context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), browserBudget)
	t.Cleanup(cancel)
	alloc, cancelAlloc := remote.NewAllocator(ctx, wsURL)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	return alloc, tab
}

// artifactsDir is the folder under artifacts/ a test saves its screenshots
// in (git-ignored), made ready.
func artifactsDir(t *testing.T, parts ...string) string {
	t.Helper()
	dir := filepath.Join(append([]string{"..", "artifacts"}, parts...)...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// stepper ends the test at the first browser step that fails, naming it.
func stepper(t *testing.T) func(what string, err error) {
	return func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

// TestTheOwnerFiltersOpensAndFinishesASeriesInARealBrowser is the one
// end-to-end test: real Chromium, the real router, a real database.
func TestTheOwnerFiltersOpensAndFinishesASeriesInARealBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	browserURL := chromiumtest.Start(t, "--hide-scrollbars", "--window-size=1200,900").WSURL
	h := newHarness(t)
	h.seed(dataset)
	storetest.Insert(t, h.pool, storetest.Pass{Site: word.Asurascans, StartedAt: t0.Add(-20 * time.Minute), Due: 12, Checked: 12,
		Counts: word.Counts{OK: 9, NoChapter: 1, Errors: 2}})

	shots := artifactsDir(t, "screenshots")
	_, ctx := browserSession(t, browserURL)
	step := stepper(t)
	shot := func(name string) {
		t.Helper()
		buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 = PNG
		step("screenshot "+name, err)
		step("save "+name, os.WriteFile(filepath.Join(shots, name+".png"), buf, 0o644))
	}
	rows := func() []string {
		t.Helper()
		ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
			`Array.from(document.querySelectorAll('[data-testid="series-row"]')).map(r => r.dataset.seriesId)`))
		step("read rows", err)
		return ids
	}

	// Sign in through a one-time link, as the console would print it.
	link, err := handlers.NewLoginLink(ctx, h.store, h.srv.URL, ownerID, t0)
	step("login link", err)
	step("open link", chromedp.Do(ctx, chromedp.Navigate(link)))
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("sign in", err)
	step("landing", chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="verdict"]`))))
	shot("01-admin-landing")

	// The list, then the failing filter: only the list region changes.
	step("list", chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/admin/series"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="series-row"]`))))
	if n := len(rows()); n != len(dataset) {
		t.Fatalf("the whole list shows %d rows, want %d", n, len(dataset))
	}
	shot("02-series-list")
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`
		document.querySelector('[data-testid="series-heading"]').__kept = 'heading';
		document.querySelector('[data-testid="filter-form"]').__kept = 'form';
		document.getElementById('series-list').__kept = 'region';
		true`))
	step("mark nodes outside the list", err)
	step("click failing", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="filter-failing"]`))))
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](
		`location.search === '?filter=failing' && document.querySelectorAll('[data-testid="series-row"]').length === 5`,
		chromedp.WithPollingTimeout(browserWait)))
	step("the failing list arrives and the address bar shows it", err)
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[
		document.querySelector('[data-testid="series-heading"]').__kept,
		document.querySelector('[data-testid="filter-form"]').__kept,
		document.getElementById('series-list').__kept].join(',')`))
	step("read marks", err)
	if kept != "heading,form,region" {
		t.Fatalf("more than the list region was replaced (marks: %q)", kept)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	step("location", err)
	if !strings.HasSuffix(loc, "/admin/series?filter=failing") {
		t.Errorf("address bar shows %q", loc)
	}
	if got := rows(); strings.Join(got, ",") != "completed-failing,failing-3mo,failing-finished,gate-refused,unverified" {
		t.Errorf("failing rows %v", got)
	}
	shot("03-series-failing")

	// Back restores the whole list, once, with its form; forward the filter.
	// It is read again, so it holds a Series added meanwhile (issue 23,
	// item 4): a copy htmx kept would show the list from before.
	h.exec(`INSERT INTO series (site, series_id, url, kind, created_at) VALUES ('asurascans', 'added-meanwhile', 'https://asurascans.com/comics/added-meanwhile', 'manga', $1)`, t0)
	step("back", chromedp.Do(ctx, chromedp.NavigateBack()))
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](
		`location.search === '' && document.querySelectorAll('[data-testid="series-row"]').length === `+fmt.Sprint(len(dataset)+1)+
			` && document.querySelector('[data-testid="list-count"]').textContent === '`+fmt.Sprint(len(dataset)+1)+`'`+
			` && document.querySelectorAll('[data-testid="filter-form"]').length === 1 && document.querySelectorAll('#series-list').length === 1`,
		chromedp.WithPollingTimeout(browserWait)))
	step("back restores the whole list", err)
	checkedFilter, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="filter-form"] input[name="filter"]:checked').value`))
	step("read the checked filter", err)
	if checkedFilter != "" {
		t.Errorf("after Back the form shows filter %q over the whole list", checkedFilter)
	}
	step("forward", chromedp.Do(ctx, chromedp.NavigateForward()))
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](
		`location.search === '?filter=failing' && document.querySelectorAll('[data-testid="series-row"]').length === 5`+
			` && document.querySelectorAll('[data-testid="filter-form"]').length === 1`,
		chromedp.WithPollingTimeout(browserWait)))
	step("forward restores the failing list", err)
	checkedFilter, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="filter-form"] input[name="filter"]:checked').value`))
	step("read the checked filter", err)
	if checkedFilter != "failing" {
		t.Errorf("after Forward the form shows filter %q over the failing list", checkedFilter)
	}

	// Open a Series from the list and Finish it through the confirm step.
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-series-id="completed-failing"] a.title`)))
	step("open the Series", err)
	step("detail", chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="finish-control"] button`))))
	shot("04-series-detail")
	// A refused correction answers in place, with its sentence and the input kept.
	step("bad correction", chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`[data-testid="correction-control"] input[name="num"]`), "twelve"),
		chromedp.Click(chromedp.CSS(`[data-testid="correction-control"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`#series-detail [data-testid="message"].error`))))
	kept, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="correction-control"] input[name="num"]').value`))
	step("read the kept input", err)
	if kept != "twelve" {
		t.Errorf("the refused correction was not shown back: %q", kept)
	}
	step("finish, step one", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="finish-control"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="finish-confirm-box"]`))))
	checked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid="finish-confirm-box"]').checked`))
	step("read the box", err)
	if checked {
		t.Fatal("the confirmation arrived pre-ticked")
	}
	shot("05-finish-confirm")
	step("finish, step two", chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="finish-confirm-box"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="finish-confirm-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="unfinish-control"]`))))
	shot("06-series-finished")

	// It leaves the site-completed list (and keeps its evidence in failing).
	step("site-completed list", chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/admin/series"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="series-row"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="filter-site-completed"]`))))
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](
		`location.search === '?filter=site-completed' && document.querySelectorAll('[data-testid="series-row"]').length === 1`,
		chromedp.WithPollingTimeout(browserWait)))
	step("the Finished Series left the list", err)
	if got := rows(); len(got) != 1 || got[0] != "completed" {
		t.Errorf("site-completed rows after Finish: %v", got)
	}
	shot("07-site-completed-after-finish")

	step("lanes", chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/admin/lanes"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="lane-row"]`))))
	shot("08-lanes")

	// The owner opens these from a Discord link on a phone.
	step("phone", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(h.srv.URL+"/admin/series?filter=failing"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="series-row"]`))))
	shot("09-phone-series-failing")
	wideList, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
	step("measure the phone list", err)
	if wideList {
		t.Errorf("the list scrolls sideways on a phone")
	}
	step("phone detail", chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/admin/series/asurascans/unverified"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="unverified-note"]`))))
	shot("10-phone-series-detail")
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
	step("measure the phone page", err)
	if wide {
		t.Errorf("the detail page scrolls sideways on a phone")
	}
	// The dark scheme, on the phone and wide.
	_, err = chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
	step("dark scheme", err)
	step("dark", chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/admin/series/asurascans/unverified"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="unverified-note"]`))))
	shot("11-dark-phone-series-detail")
	step("dark wide", chromedp.Do(ctx, chromedp.EmulateViewport(1200, 900), chromedp.Navigate(h.srv.URL+"/admin"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="verdict"]`))))
	shot("12-dark-admin-landing")
	step("dark list", chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/admin/series"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="series-row"]`))))
	shot("13-dark-series-list")
	step("dark lanes", chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/admin/lanes"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="lane-row"]`))))
	shot("14-dark-lanes")
	if err := ctx.Err(); errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("the browser test ran out of time")
	}
}
