package handlers_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// Two Series whose titles share a prefix longer than a phone row is wide:
// the pair issue 23 met as "Omniscient Reader's View…" twice.
const (
	orvMain = "Omniscient Reader's Viewpoint"
	orvSide = "Omniscient Reader's Viewpoint: Side Story"
)

// visibleText is the part of an element's text that is drawn inside its
// own box: the characters an ellipsis or a line clamp cuts are left out.
const visibleText = `(el => {
	const box = el.getBoundingClientRect(), walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
	let out = '';
	for (let n = walker.nextNode(); n; n = walker.nextNode()) {
		for (let i = 0; i < n.length; i++) {
			const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1);
			const c = r.getBoundingClientRect();
			if (c.width > 0 && c.left >= box.left - 0.5 && c.right <= box.right + 0.5 && c.top >= box.top - 0.5 && c.bottom <= box.bottom + 0.5) out += n.data[i];
		}
	}
	return out;
})`

// phoneRowBound is the most one Bookmark row may take on a 390-px phone:
// a cover (68 px) beside two lines of title, a fact line and a 32-px
// action row, with the row's padding (issue 23, item 10: 16 Bookmarks
// made a 4,240-px page, 265 px a row).
const phoneRowBound = 120

// TestOnAPhoneTheFirstRowsShowAndLongTitlesTellApart is issue 23's item 10
// in real Chromium at 390×844: the first Series row of /admin/series is on
// the first screen, 16 Bookmarks on / stay compact rows whose other
// controls sit behind a disclosure a keyboard opens, and two titles that
// share a long prefix show different text. Screenshots at 390 and 1280 px
// in both schemes; axe finds nothing on /.
func TestOnAPhoneTheFirstRowsShowAndLongTitlesTellApart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	browserURL := chromiumtest.Start(t, "--hide-scrollbars", "--window-size=390,844",
		"--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows").WSURL
	axe := axeSource(t)
	h := newHarness(t)
	h.seed(dataset)
	storetest.Ensure(t, h.pool, storetest.Reader{ID: ownerID, Name: "Owner"})
	for i := range 16 {
		id, title := fmt.Sprintf("work-%02d", i), fmt.Sprintf("Work Number %d", i)
		switch i {
		case 0:
			id, title = "orv", orvMain
		case 1:
			id, title = "orv-side", orvSide
		}
		series := storetest.Series{Site: word.Asurascans, ID: id, URL: "https://asurascans.com/comics/" + id,
			Title: title, Kind: word.Asurascans.Kind(), LatestChapter: "12", CheckedAt: t0.Add(-3 * time.Hour)}
		// Three rows carry a health mark (issue 24, item 5), so the
		// screenshots show each beside the ember.
		switch i {
		case 2:
			series.FinishedAt = t0.Add(-48 * time.Hour)
		case 4:
			series.CompletedAt = t0.Add(-3 * time.Hour)
		}
		storetest.Insert(t, h.pool, series)
		if i == 3 {
			storetest.Insert(t, h.pool, storetest.Failure{Site: word.Asurascans, Series: id, Outcome: word.Errors, FailingSince: t0.Add(-20 * time.Hour)})
		}
		storetest.Insert(t, h.pool, storetest.Bookmark{Reader: ownerID, Site: word.Asurascans, Series: id, Progress: "11", UpdatedAt: t0.Add(-time.Hour)})
	}
	shots := artifactsDir(t, "screenshots", "phone")
	_, ctx := browserSession(t, browserURL)
	step := stepper(t)
	link, err := handlers.NewLoginLink(ctx, h.store, h.srv.URL, ownerID, t0)
	step("login link", err)
	step("open link", chromedp.Do(ctx, chromedp.Navigate(link)))
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("sign in", err)
	step("phone", chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))

	// The first Series row starts on the first screen.
	step("series", chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/admin/series"), chromedp.WaitReady(chromedp.CSS(`[data-testid="series-row"]`))))
	top, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector('[data-testid="series-row"]').getBoundingClientRect().top + scrollY`))
	step("measure the first row", err)
	if top > 844-40 {
		t.Errorf("the first Series row starts %.0f px down a 844-px screen", top)
	}
	tellApart(t, ctx, `[data-testid="series-row"][data-series-id="%s"] .title`)
	// The filters open from their fold; the bulk line shows once a row is picked.
	seen := func(sel string) bool {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('`+sel+`').checkVisibility()`))
		step("look for "+sel, err)
		return v
	}
	if seen(`[data-testid="filter-failing"]`) || seen(`[data-testid="bulk-finish"]`) {
		t.Errorf("on a phone the filters or the bulk line show before they are asked for")
	}
	step("open the filters", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="filter-fold"] > summary`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="filter-failing"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="sort-select"]`))))
	shotAt(t, ctx, shots, "series-filters-open-light-phone")
	step("pick a row", chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-series-id="orv"] [data-testid="row-pick"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="bulk-finish"]`))))
	if v := axeViolations(t, ctx, axe); v != "" {
		t.Errorf("/admin/series with the filters open and a row picked: axe: %s", v)
	}
	// What the phone's screen shows (a full-page shot would draw the line
	// that sticks above the rows where the screen was, not where it is).
	screen, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	step("screenshot the picked row", err)
	step("save the picked row", os.WriteFile(filepath.Join(shots, "series-picked-light-phone.png"), screen, 0o644))

	// / with 16 Bookmarks: compact rows, the long titles told apart.
	step("home", chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/"), chromedp.WaitReady(chromedp.CSS(`[data-testid="bookmark"]`))))
	heights, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`Array.from(document.querySelectorAll('[data-testid="bookmark"]')).map(r => r.getBoundingClientRect().height)`))
	step("measure the rows", err)
	if len(heights) != 16 {
		t.Fatalf("%d Bookmark rows, want 16", len(heights))
	}
	for i, hgt := range heights {
		if hgt > phoneRowBound {
			t.Errorf("Bookmark row %d is %.0f px tall on a phone, want at most %d", i, hgt, phoneRowBound)
		}
	}
	tellApart(t, ctx, `[data-testid="bookmark"][data-series-id="%s"] .title`)
	marks, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid="health"]')).filter(m => m.checkVisibility()).map(m => m.dataset.health).sort()`))
	step("read the health marks", err)
	if strings.Join(marks, ",") != "failing,finished,site-completed" {
		t.Errorf("health marks drawn on a phone: %v", marks)
	}
	if v := axeViolations(t, ctx, axe); v != "" {
		t.Errorf("/ on a phone: axe: %s", v)
	}

	// The row's other controls open from the keyboard, no script needed.
	row := `[data-testid="bookmark"][data-series-id="orv"]`
	hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('`+row+` [data-testid="progress-input"]').checkVisibility()`))
	step("read the closed row", err)
	if hidden {
		t.Errorf("the Progress field shows before the row's disclosure is opened")
	}
	step("focus the disclosure", chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(row+` [data-testid="bookmark-more"] summary`))))
	step("press Enter", chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)))
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](`['progress-input', 'set-progress', 'remove'].every(id => document.querySelector('`+row+` [data-testid="' + id + '"]').checkVisibility())`,
		chromedp.WithPollingTimeout(browserWait)))
	step("Enter opens the row's controls", err)
	if v := axeViolations(t, ctx, axe); v != "" {
		t.Errorf("/ with a row open: axe: %s", v)
	}
	shotAt(t, ctx, shots, "home-open-light-phone")

	for _, scheme := range []string{"light", "dark"} {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		step("scheme", err)
		for _, size := range []struct {
			name string
			w, h int64
		}{{"phone", 390, 844}, {"desktop", 1280, 900}} {
			step("viewport", chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h)))
			for name, path := range map[string]string{"home": "/", "series": "/admin/series"} {
				step(name, chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+path), chromedp.WaitReady(chromedp.CSS(`main`))))
				if v := axeViolations(t, ctx, axe); v != "" {
					t.Errorf("%s (%s, %s): axe: %s", name, scheme, size.name, v)
				}
				wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
				step("measure", err)
				if wide {
					t.Errorf("%s (%s, %s) scrolls sideways", name, scheme, size.name)
				}
				shotAt(t, ctx, shots, fmt.Sprintf("%s-%s-%s", name, scheme, size.name))
			}
		}
	}
}

// tellApart fails the test when the two long titles, found by the selector
// pattern, show the same text, or either shows less than its shared prefix
// and one more character.
func tellApart(t *testing.T, ctx context.Context, pattern string) {
	t.Helper()
	var shown [2]string
	for i, id := range []string{"orv", "orv-side"} {
		sel := fmt.Sprintf(pattern, id)
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](visibleText+`(document.querySelector('`+sel+`'))`))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		shown[i] = s
	}
	// A space where a line wraps is drawn nowhere, so spaces are not compared.
	bare := func(s string) string { return strings.ReplaceAll(s, " ", "") }
	if shown[0] == shown[1] || !strings.HasPrefix(bare(orvSide), bare(shown[1])) || len(bare(shown[1])) <= len(bare(orvMain)) {
		t.Errorf("two Series show as %q and %q", shown[0], shown[1])
	}
}
