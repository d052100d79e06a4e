package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// importCounts is an import's count of each outcome as its answer shows
// them, "word=n" in the answer's order.
func importCounts(a answer) string {
	var out []string
	a.testid("import-count").Each(func(_ int, s *goquery.Selection) {
		out = append(out, s.AttrOr("data-result", "")+"="+strings.TrimSpace(s.Find("strong").Text()))
	})
	return strings.Join(out, ",")
}

// shownEntries are the entry numbers of an import's result lines, in order.
func shownEntries(a answer) []string {
	var out []string
	a.testid("add-result").Each(func(_ int, s *goquery.Selection) { out = append(out, s.AttrOr("value", "")) })
	return out
}

// TestABigImportAnswersWithCountsAndAtMostAHundredLines: the answer to a
// 10,000-entry import counts each outcome, draws at most 100 result lines,
// those that need the Reader's attention first, each numbered as its entry
// in the file, says how many more there are, and draws at most the first
// 100 rows of the Reader's list: its size does not grow with the file.
func TestABigImportAnswersWithCountsAndAtMostAHundredLines(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.client(readerA)
	const comics = "https://asurascans.com/comics/"
	h.post(c, "/", url.Values{"urls": {comics + "s-0\n" + comics + "s-1/chapter/50"}})
	var f strings.Builder
	f.WriteString(`{"version":1,"bookmarks":[`)
	for i := range 10000 {
		if i > 0 {
			f.WriteString(",\n")
		}
		switch {
		case i < 120:
			fmt.Fprintf(&f, `{"url":"%ss-%d","progress":%d}`, comics, i, i%5+1)
		case i < 9950:
			fmt.Fprintf(&f, `{"url":"https://example.com/x-%d"}`, i)
		default:
			fmt.Fprintf(&f, `{"url":"%sn-%d","progress":"5"}`, comics, i)
		}
	}
	f.WriteString("]}")
	a := h.importFile(c, "export.json", []byte(f.String()))
	if a.status != http.StatusOK {
		t.Fatalf("import: %d %s", a.status, a.testid("message").Text())
	}
	if got, want := importCounts(a), "added=118,progress=1,already=1,unsupported=9,830,not_a_chapter=50"; got != want {
		t.Errorf("counts %q, want %q", got, want)
	}
	shown := shownEntries(a)
	if len(shown) != 100 || shown[0] != "121" || shown[99] != "220" {
		t.Fatalf("%d lines shown (%v…), want the 100 first that need attention, entries 121 to 220", len(shown), shown[:min(3, len(shown))])
	}
	if got := strings.Join(results(a), ","); strings.Trim(strings.ReplaceAll(got, "unsupported", ""), ",") != "" {
		t.Errorf("the lines shown are not all the refused entries: %s", got)
	}
	if got := a.testid("import-unshown").Text(); !strings.Contains(got, "9,900") {
		t.Errorf("the lines not shown: %q, want it to count 9,900", got)
	}
	if rows, more := a.testid("bookmark").Length(), a.testid("bookmarks-more").Text(); rows != 100 || !strings.Contains(more, "100 of your 120") {
		t.Errorf("the list drew %d rows and said %q, want the first 100 of 120", rows, more)
	}
	if got := h.text(`SELECT count(*)::text FROM bookmarks WHERE reader_id = $1`, readerA); got != "120" {
		t.Errorf("Reader A has %s Bookmarks, want 120", got)
	}
}

// TestAnImportPastAHundredLinesShowsItsRefusalsThenItsFirstLines: with
// fewer than 100 refused entries, the lines shown are every refused one and
// then the file's first others, in the file's order.
func TestAnImportPastAHundredLinesShowsItsRefusalsThenItsFirstLines(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.client(readerA)
	var list strings.Builder
	for i := range 150 {
		if i < 140 {
			fmt.Fprintf(&list, "https://asurascans.com/comics/s-%d\n", i)
		} else {
			fmt.Fprintf(&list, "https://example.com/x-%d\n", i)
		}
	}
	a := h.importFile(c, "list.txt", []byte(list.String()))
	if a.status != http.StatusOK {
		t.Fatalf("import: %d %s", a.status, a.testid("message").Text())
	}
	if got, want := importCounts(a), "added=140,unsupported=10"; got != want {
		t.Errorf("counts %q, want %q", got, want)
	}
	var want []string
	for n := 1; n <= 90; n++ {
		want = append(want, fmt.Sprint(n))
	}
	for n := 141; n <= 150; n++ {
		want = append(want, fmt.Sprint(n))
	}
	if got := shownEntries(a); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("entries shown %v, want 1 to 90 then 141 to 150", got)
	}
	if got := a.testid("import-unshown").Text(); !strings.Contains(got, "50") {
		t.Errorf("the lines not shown: %q, want it to count 50", got)
	}
}
