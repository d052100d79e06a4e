package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// seedHealthRows gives readerA, beside seedReaderRows' three, a fourth
// Bookmark and marks the Series (issue 24, item 5): Nano Machine Finished,
// Martial Peak failing for 13 hours, the kagane Series completed on its
// Site, and Reverend Insanity failing for 11 hours only, which is not yet
// failing by the owner's rule and so stays unmarked.
func seedHealthRows(h *harness) {
	h.t.Helper()
	seedReaderRows(h)
	h.post(h.client(readerA), "/", url.Values{"urls": {novelChapter}})
	h.exec(`UPDATE series SET finished_at = $1 WHERE site = 'asurascans'`, t0.Add(-48*time.Hour))
	h.exec(`UPDATE series SET site_completed_at = $1 WHERE site = 'kagane'`, t0.Add(-3*time.Hour))
	h.exec(`UPDATE series SET latest_chapter_num = 7, title = 'Reverend Insanity' WHERE site = 'novelfull'`)
	storetest.Insert(h.t, h.pool,
		storetest.Failure{Site: "demonicscans", Series: "Martial-Peak", Outcome: word.Errors, FailingSince: t0.Add(-13 * time.Hour)},
		storetest.Failure{Site: "novelfull", Series: "reverend-insanity", Outcome: word.Errors, FailingSince: t0.Add(-11 * time.Hour)})
}

func TestARowMarksItsSeriesFinishedFailingOrCompletedOnItsSite(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedHealthRows(h)
	a := h.get(h.client(readerA), "/")
	if a.status != http.StatusOK {
		t.Fatalf("/ answered %d", a.status)
	}
	mark := func(site string) (string, string) {
		s := a.find(`[data-testid="bookmark"][data-site="` + site + `"] .fact [data-testid="health"]`)
		return s.AttrOr("data-health", ""), strings.Join(strings.Fields(s.Text()), " ")
	}
	for _, c := range []struct{ site, word, text string }{
		{"asurascans", "finished", "finished — no longer checked"},
		{"demonicscans", "failing", "not updating since 29 Nov"},
		{"kagane", "site-completed", "completed on its Site"},
		{"novelfull", "", ""},
	} {
		if w, text := mark(c.site); w != c.word || text != c.text {
			t.Errorf("%s row: mark %q %q, want %q %q", c.site, w, text, c.word, c.text)
		}
	}
	if n := a.testid("health").Length(); n != 3 {
		t.Errorf("%d marks on the page, want 3", n)
	}
	// The failing mark's moment is machine-readable too.
	since := a.find(`[data-health="failing"] time`)
	if iso, full := since.AttrOr("datetime", ""), since.AttrOr("title", ""); iso != "2026-11-29T23:00:00Z" || full != "29 Nov 23:00 UTC" {
		t.Errorf("failing since datetime %q, title %q", iso, full)
	}
}

// Re-adding a Finished Series says it is Finished and not polled, and that
// the Bookmark was made all the same; one already bookmarked says so too.
func TestReAddingAFinishedSeriesSaysItIsNotPolled(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedHealthRows(h)
	c := h.client(readerB)
	a := h.post(c, "/", url.Values{"urls": {asuraSuffixed}})
	if a.status != http.StatusOK {
		t.Fatalf("add answered %d: %s", a.status, a.body)
	}
	got := strings.TrimSpace(a.testid("add-result").Find("span").Text())
	if want := "Nano Machine is Finished by the owner and no longer polled; bookmarked anyway."; got != want {
		t.Errorf("re-add of a Finished Series says %q, want %q", got, want)
	}
	if rows := h.text(`SELECT count(*)::text FROM bookmarks WHERE reader_id = $1 AND site = 'asurascans'`, readerB); rows != "1" {
		t.Errorf("%s Bookmarks for readerB, want 1", rows)
	}
	again := h.post(c, "/", url.Values{"urls": {asuraSuffixed}})
	got = strings.TrimSpace(again.testid("add-result").Find("span").Text())
	if want := "Already bookmarked; Nano Machine is Finished by the owner and no longer polled."; got != want {
		t.Errorf("the second add says %q, want %q", got, want)
	}
	// A Series not Finished still answers as before.
	other := h.post(c, "/", url.Values{"urls": {novelChapter}})
	if s := other.testid("add-result").Text(); strings.Contains(s, "Finished") || !strings.Contains(s, "Added novelfull Series reverend-insanity.") {
		t.Errorf("a Series not Finished: %q", s)
	}
}
