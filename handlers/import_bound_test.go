package handlers_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/internal/mihon/mihontest"
)

// hostileImports are files a Reader may send that the import must refuse
// with a sentence, whatever they would cost read whole: each is named with
// the words its refusal says. Sizes are kept to what today's reader costs
// in a few hundred MB, so that the test can be seen to fail on it.
func hostileImports(t testing.TB) []struct{ name, file, says string } {
	gz := func(b []byte) string {
		var out bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		return out.String()
	}
	var over strings.Builder
	over.WriteString(`{"version":1,"bookmarks":[`)
	for i := range 10001 {
		fmt.Fprintf(&over, `{"url":"https://asurascans.com/comics/s-%d"},`, i)
	}
	overJSON := strings.TrimSuffix(over.String(), ",") + "]}"
	entries := make([]mihontest.Entry, 10001)
	for i := range entries {
		entries[i] = mihontest.Entry{Source: 1, URL: fmt.Sprintf("/comics/s-%d", i)}
	}
	return []struct{ name, file, says string }{
		{"backup.tachibk", gz(bytes.Repeat([]byte{0x0a, 0x00}, 1<<20)), "empty entry"},
		{"backup.proto.gz", string(mihontest.Backup(t, map[int64]string{1: "Asura Scans"}, entries...)), "more than 10,000 manga"},
		{"empty.json", `{"version":1,"bookmarks":[` + strings.Repeat(`{},`, 1<<20) + `{}]}`, "is empty"},
		{"over.json", overJSON, "more than 10,000 Bookmarks"},
		{"long.json", `{"version":1,"bookmarks":[{"url":"` + strings.Repeat("a", 4<<20) + `"}]}`, "larger than 16 KiB"},
		{"empty.csv", strings.Join(exportHeader, ",") + "\n" + strings.Repeat(",,,,,\n", 1<<20), "is empty"},
		{"line.txt", "https://asurascans.com/comics/" + strings.Repeat("a", 16<<20), "longer than 16 KiB"},
	}
}

var exportHeader = []string{"site", "series_id", "url", "title", "progress", "added_at"}

// TestHostileImportsAreRefusedWithASentenceInBoundedMemory: a backup of
// empty entries, an export of empty Bookmarks, a file past 10,000 entries
// or holding one entry past its bound is a 400 with a sentence, adds
// nothing, and costs the server at most 32 MB of allocation to refuse,
// however large it would be read whole. Not parallel: the bound is the
// process's own count of bytes allocated (runtime.MemStats.TotalAlloc).
func TestHostileImportsAreRefusedWithASentenceInBoundedMemory(t *testing.T) {
	h := newHarness(t)
	c := h.client(readerA)
	for _, tc := range hostileImports(t) {
		ct, form := h.importForm(tc.name, []byte(tc.file))
		var a answer
		used := allocated(func() { a = h.postImport(c, ct, form) })
		if a.status != http.StatusBadRequest || !strings.Contains(a.testid("message").Text(), tc.says) {
			t.Errorf("%s: %d, want 400 saying %q: %s", tc.name, a.status, tc.says, a.testid("message").Text())
		}
		t.Logf("%s (%d KB): %d KB allocated", tc.name, len(tc.file)>>10, used>>10)
		if used > 32<<20 {
			t.Errorf("%s (%d KB): refusing it allocated %d MB, want at most 32", tc.name, len(tc.file)>>10, used>>20)
		}
	}
	if got := h.text(importedQuery); got != "" {
		t.Errorf("a refused file added %q", got)
	}
}

// allocated is how many bytes the whole process allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// heldImport is an import whose file the server has begun to read and the
// test has not finished sending: its place among the imports running is
// taken until release.
type heldImport struct {
	body   *io.PipeWriter
	rest   []byte
	answer chan *http.Response
}

// holdImport starts an import of file as c's Reader and returns once the
// server asked for its body ("100 Continue": the import's handler has taken
// its place and begun to read), with the file still unsent.
func (h *harness) holdImport(c *http.Client, file []byte) *heldImport {
	h.t.Helper()
	ct, form := h.importForm("list.txt", file)
	pr, pw := io.Pipe()
	// A test that stops early ends the upload, so that the server's Close
	// does not wait on a handler reading a body nobody sends.
	h.t.Cleanup(func() { pw.CloseWithError(errors.New("the test ended")) })
	asked := make(chan struct{})
	trace := &httptrace.ClientTrace{Got100Continue: func() { close(asked) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(h.t.Context(), trace), http.MethodPost, h.srv.URL+"/bookmarks/import", pr)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Expect", "100-continue")
	// The transport waits for the server's "100 Continue" before it reads
	// the body; an hour is never reached.
	slow := *c
	slow.Transport = &http.Transport{ExpectContinueTimeout: time.Hour}
	held := &heldImport{body: pw, rest: form, answer: make(chan *http.Response, 1)}
	go func() {
		resp, err := slow.Do(req)
		if err != nil {
			pr.CloseWithError(err)
			close(held.answer)
			return
		}
		held.answer <- resp
	}()
	select {
	case <-asked:
	case resp := <-held.answer:
		h.t.Fatalf("the held import was answered at once: %v", resp)
	}
	return held
}

// release sends the rest of the held import and returns its answer.
func (held *heldImport) release(h *harness) answer {
	h.t.Helper()
	if _, err := held.body.Write(held.rest); err != nil {
		h.t.Fatal(err)
	}
	held.body.Close()
	resp, ok := <-held.answer
	if !ok {
		h.t.Fatal("the held import failed")
	}
	return h.answerOf(resp)
}

// TestOneImportPerReaderAndTwoPerServerRunAtOnce: while a Reader's import
// is being read, their next is 429 with Retry-After and a sentence; while
// two Readers' imports are, a third Reader's is too. A refused import adds
// nothing, and once a place is free the same file is imported.
func TestOneImportPerReaderAndTwoPerServerRunAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ada, ben, owner := h.client(readerA), h.client(readerB), h.client(ownerID)
	file := func(id string) []byte { return []byte("https://asurascans.com/comics/" + id + "\n") }
	busy := func(who string, a answer, says string) {
		t.Helper()
		if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" || !strings.Contains(a.testid("message").Text(), says) {
			t.Fatalf("%s: %d Retry-After %q, want 429 saying %q: %s", who, a.status, a.header.Get("Retry-After"), says, a.testid("message").Text())
		}
	}
	adaFirst := h.holdImport(ada, file("ada-1"))
	busy("Ada's second import", h.importFile(ada, "list.txt", file("ada-2")), "An import of yours is still running")
	benFirst := h.holdImport(ben, file("ben-1"))
	busy("a third Reader's import", h.importFile(owner, "list.txt", file("owner-1")), "Other imports are running")
	if got := h.text(importedQuery); got != "" {
		t.Fatalf("a refused import added %q", got)
	}
	if a := adaFirst.release(h); a.status != http.StatusOK {
		t.Fatalf("Ada's first import: %d %s", a.status, a.doc.Text())
	}
	if a := h.importFile(owner, "list.txt", file("owner-1")); a.status != http.StatusOK {
		t.Fatalf("the third Reader's import once a place was free: %d %s", a.status, a.testid("message").Text())
	}
	if a := benFirst.release(h); a.status != http.StatusOK {
		t.Fatalf("Ben's first import: %d %s", a.status, a.doc.Text())
	}
	want := "owner-1 asurascans/owner-1 -\nreader-a asurascans/ada-1 -\nreader-b asurascans/ben-1 -"
	if got := h.text(importedQuery); got != want {
		t.Fatalf("bookmarks after the imports:\n%s\nwant\n%s", got, want)
	}
}

// TestEveryImportFormatChecksChaptersAsTheAPIDoesAndTheExportRoundTrips:
// a Mihon chapter of 3.4e38, an export's Progress sent as a string, over
// seven digits, negative or with an exponent is refused on its own line as
// the API refuses it (not_a_chapter), and the rest of the file is added.
// Then the Reader's own JSON and CSV exports import whole into other
// Readers, their Progress kept.
func TestEveryImportFormatChecksChaptersAsTheAPIDoesAndTheExportRoundTrips(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ada := h.client(readerA)
	const comics = "https://asurascans.com/comics/"
	backup := mihontest.Backup(t, map[int64]string{1: "Asura Scans"},
		mihontest.Entry{Source: 1, URL: "/comics/huge", Chapters: []mihontest.Chapter{{Read: true, Number: 3.4e38}}},
		mihontest.Entry{Source: 1, URL: "/comics/fine", Chapters: []mihontest.Chapter{{Read: true, Number: 12.5}}})
	export := `{"version":1,"bookmarks":[{"url":"` + comics + `s1","progress":"5"},{"url":"` + comics + `s2","progress":12345678},` +
		`{"url":"` + comics + `s3","progress":-1},{"url":"` + comics + `s4","progress":1e3},{"url":"` + comics + `s5","progress":7}]}`
	csv := strings.Join(exportHeader, ",") + "\nasurascans,c1," + comics + "c1,,3.4e38,\nasurascans,c2," + comics + "c2,,-2,\nasurascans,c3," + comics + "c3,,8,\n"
	for _, tc := range []struct{ name, file, results string }{
		{"backup.tachibk", string(backup), "not_a_chapter,added"},
		{"export.json", export, "not_a_chapter,not_a_chapter,not_a_chapter,not_a_chapter,added"},
		{"export.csv", csv, "not_a_chapter,not_a_chapter,added"},
	} {
		a := h.importFile(ada, tc.name, []byte(tc.file))
		if got := strings.Join(results(a), ","); a.status != http.StatusOK || got != tc.results {
			t.Fatalf("%s: %d %q, want %q: %s", tc.name, a.status, got, tc.results, a.testid("add-result").Text())
		}
	}
	const adas = "reader-a asurascans/c3 8\nreader-a asurascans/fine 12.5\nreader-a asurascans/s5 7"
	if got := h.text(importedQuery); got != adas {
		t.Fatalf("Ada's bookmarks:\n%s\nwant\n%s", got, adas)
	}
	for _, to := range []struct{ reader, form string }{{readerB, "json"}, {ownerID, "csv"}} {
		file := h.get(ada, "/bookmarks/export."+to.form)
		a := h.importFile(h.client(to.reader), "export."+to.form, []byte(file.body))
		if got := strings.Join(results(a), ","); a.status != http.StatusOK || got != "added,added,added" {
			t.Fatalf("Ada's %s export into %s: %d %q: %s", to.form, to.reader, a.status, got, a.doc.Text())
		}
		want := strings.ReplaceAll(adas, "reader-a ", to.reader+" ")
		if got := h.text(`SELECT string_agg(reader_id || ' ' || site || '/' || series_id || ' ' || coalesce(progress_num::text, '-'), E'\n' ORDER BY site, series_id) FROM bookmarks WHERE reader_id = $1`, to.reader); got != want {
			t.Errorf("%s's bookmarks from the %s export:\n%s\nwant\n%s", to.reader, to.form, got, want)
		}
	}
}

// The chapter of a chapter address in a list goes through the same rule
// (adapters.ChapterOf reads it with word.ParseChapter): a number past its
// bounds is no Progress.
func TestAListsChapterAddressPastTheBoundSetsNoProgress(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.importFile(h.client(readerA), "list.txt", []byte("https://asurascans.com/comics/nano-machine/chapter/123456789\n"))
	if a.status != http.StatusOK {
		t.Fatalf("list: %d %s", a.status, a.doc.Text())
	}
	if got := h.text(importedQuery); got != "reader-a asurascans/nano-machine -" {
		t.Fatalf("bookmarks: %q", got)
	}
}
