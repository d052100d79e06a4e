package handlers_test

import (
	"net/http"
	"strings"
	"testing"
)

// A Reader's own CSV export, with Progress, imports back into another
// Reader whole; and a "# comment" line or a blank line, in a CSV export
// or in a list, is no entry: it gets no line in the answer, and the file's
// entries are added around it.
func TestACommentOrBlankLineIsNoEntryAndTheCSVExportImportsBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ada := h.client(readerA)
	const comics = "https://asurascans.com/comics/"
	list := "# my list\n\n" + comics + "one/chapter/4\n   \n#" + comics + "not-me\n" + comics + "two\n"
	if a := h.importFile(ada, "list.txt", []byte(list)); a.status != http.StatusOK || strings.Join(results(a), ",") != "added,added" {
		t.Fatalf("the list: %d %q: %s", a.status, results(a), a.testid("add-result").Text())
	}
	csv := "# exported from mangabookmark\n" + strings.Join(exportHeader, ",") + "\n\n# a note\n" +
		"asurascans,three," + comics + "three,Three,7,2026-11-28T12:00:00Z\n\n"
	if a := h.importFile(ada, "export.csv", []byte(csv)); a.status != http.StatusOK || strings.Join(results(a), ",") != "added" {
		t.Fatalf("the CSV: %d %q: %s", a.status, results(a), a.doc.Text())
	}
	const adas = "reader-a asurascans/one 4\nreader-a asurascans/three 7\nreader-a asurascans/two -"
	if got := h.text(importedQuery); got != adas {
		t.Fatalf("Ada's bookmarks:\n%s\nwant\n%s", got, adas)
	}
	file := h.get(ada, "/bookmarks/export.csv")
	a := h.importFile(h.client(readerB), "mangabookmark.csv", []byte(file.body))
	if got := strings.Join(results(a), ","); a.status != http.StatusOK || got != "added,added,added" {
		t.Fatalf("Ada's CSV export into Ben: %d %q: %s", a.status, got, a.doc.Text())
	}
	want := adas + "\n" + strings.ReplaceAll(adas, "reader-a ", "reader-b ")
	if got := h.text(importedQuery); got != want {
		t.Errorf("bookmarks after the round trip:\n%s\nwant\n%s", got, want)
	}
}
