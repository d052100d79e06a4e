package handlers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/handlers"
)

// TestAReaderImportsAFileInARealBrowser is issue 24, item 7 on the page: a
// Reader picks a file under the add box, htmx uploads it, and a line per
// entry appears; screenshots at both widths and in both schemes.
func TestAReaderImportsAFileInARealBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	browserURL := chromiumtest.Start(t, "--hide-scrollbars", "--window-size=1280,900").WSURL
	h := newHarness(t)
	shots := artifactsDir(t, "screenshots", "import")
	file := filepath.Join(t.TempDir(), "list.txt")
	list := "https://asurascans.com/comics/nano-machine/chapter/12\nhttps://novelfull.com/reverend-insanity.html\nhttps://example.com/not-a-site\n"
	if err := os.WriteFile(file, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ctx := browserSession(t, browserURL)
	step := stepper(t)
	link, err := handlers.NewLoginLink(ctx, h.store, h.srv.URL, readerA, t0)
	step("login link", err)
	step("open link", chromedp.Do(ctx, chromedp.Navigate(link)))
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("sign in", err)
	for _, scheme := range []string{"light", "dark"} {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		step("scheme", err)
		for _, size := range []struct {
			name string
			w, h int64
		}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
			step("import", chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h),
				chromedp.Navigate(h.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="import-file"]`)),
				chromedp.SetUploadFiles(chromedp.CSS(`[data-testid="import-file"]`), []string{file}),
				chromedp.Click(chromedp.CSS(`[data-testid="import-submit"]`)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="add-result"][data-result="unsupported"]`))))
			n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="add-result"]').length`))
			step("count results", err)
			if n != 3 {
				t.Errorf("%s %s: %d result lines, want 3", scheme, size.name, n)
			}
			wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
			step("measure", err)
			if wide {
				t.Errorf("%s %s: the page scrolls sideways", scheme, size.name)
			}
			shotAt(t, ctx, shots, fmt.Sprintf("import-%s-%s", scheme, size.name))
		}
	}
}

// TestABigImportsAnswerStaysBoundedInARealBrowser: after a 10,000-line
// import the page counts each outcome, draws at most 100 result lines and
// 100 rows, and does not scroll sideways at either width or in either
// scheme; screenshots of the whole page and of its first screen.
func TestABigImportsAnswerStaysBoundedInARealBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	browserURL := chromiumtest.Start(t, "--hide-scrollbars", "--window-size=1280,900").WSURL
	h := newHarness(t)
	shots := artifactsDir(t, "screenshots", "import")
	var list strings.Builder
	for i := range 10000 {
		if i < 150 {
			fmt.Fprintf(&list, "https://asurascans.com/comics/s-%d/chapter/%d\n", i, i%40+1)
		} else {
			fmt.Fprintf(&list, "https://example.com/not-a-site/%d\n", i)
		}
	}
	file := filepath.Join(t.TempDir(), "big.txt")
	if err := os.WriteFile(file, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ctx := browserSession(t, browserURL)
	step := stepper(t)
	link, err := handlers.NewLoginLink(ctx, h.store, h.srv.URL, readerA, t0)
	step("login link", err)
	step("open link", chromedp.Do(ctx, chromedp.Navigate(link)))
	_, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	step("sign in", err)
	for _, scheme := range []string{"light", "dark"} {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		step("scheme", err)
		for _, size := range []struct {
			name string
			w, h int64
		}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
			step("import", chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h),
				chromedp.Navigate(h.srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="import-file"]`)),
				chromedp.SetUploadFiles(chromedp.CSS(`[data-testid="import-file"]`), []string{file}),
				chromedp.Click(chromedp.CSS(`[data-testid="import-submit"]`)),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="import-tally"]`))))
			n, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.querySelectorAll('[data-testid="add-result"]').length, document.querySelectorAll('[data-testid="bookmark"]').length, document.querySelectorAll('[data-testid="import-count"]').length]`))
			step("count", err)
			if n[0] != 100 || n[1] != 100 || n[2] < 2 {
				t.Errorf("%s %s: %d result lines, %d rows, %d counts; want 100, 100 and the counts", scheme, size.name, n[0], n[1], n[2])
			}
			wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
			step("measure", err)
			if wide {
				t.Errorf("%s %s: the page scrolls sideways", scheme, size.name)
			}
			name := fmt.Sprintf("big-import-%s-%s", scheme, size.name)
			shotAt(t, ctx, shots, name)
			for _, part := range []struct{ name, at string }{
				{"top", `[data-testid="import-form"]`}, {"unshown", `[data-testid="import-unshown"]`}, {"list", `[data-testid="bookmarks-more"]`},
			} {
				step("scroll", chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(part.at))))
				shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				step("screen "+part.name, err)
				if err := os.WriteFile(filepath.Join(shots, name+"-"+part.name+".png"), shot, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
