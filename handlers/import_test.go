package handlers_test

import (
	"bytes"
	"compress/gzip"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/internal/mihon/mihontest"
)

// importedQuery is every Bookmark as bookmarkQuery shows it, in a fixed
// order: the import adds entries several at a time.
const importedQuery = `SELECT coalesce(string_agg(reader_id || ' ' || site || '/' || series_id || ' ' || coalesce(progress_num::text, '-'), E'\n' ORDER BY reader_id, site, series_id), '') FROM bookmarks`

// importFile posts body as the upload field "file" of /bookmarks/import.
func (h *harness) importFile(c *http.Client, name string, body []byte) answer {
	h.t.Helper()
	ct, form := h.importForm(name, body)
	return h.postImport(c, ct, form)
}

// importForm is the multipart form of an upload of body as the field
// "file": its Content-Type and its bytes.
func (h *harness) importForm(name string, body []byte) (string, []byte) {
	h.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		h.t.Fatal(err)
	}
	fw.Write(body)
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

// postImport posts a form importForm made to /bookmarks/import.
func (h *harness) postImport(c *http.Client, contentType string, form []byte) answer {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+"/bookmarks/import", bytes.NewReader(form))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.answerOf(resp)
}

// answerOf reads an import's answer and closes it.
func (h *harness) answerOf(resp *http.Response) answer {
	h.t.Helper()
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
	if err != nil {
		h.t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b.String(), doc: doc}
}

// TestImportReadsTheExportAndAListOfAddresses is issue 24, item 7: the
// JSON export comes back with its Progress, a text list is added line by
// line, and each entry gets its own line in the result.
func TestImportReadsTheExportAndAListOfAddresses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.client(readerA)
	export := `{"version":1,"exported_at":"2026-12-01T10:00:00Z","reader":"A","bookmarks":[
{"site":"asurascans","series_id":"nano-machine","url":"https://asurascans.com/comics/nano-machine","title":"Nano Machine","progress":12.5,"added_at":"2026-11-01T10:00:00Z"},
{"site":"x","series_id":"y","url":"https://example.com/nothing","title":"","progress":null,"added_at":"2026-11-01T10:00:00Z"},
{"site":"comix","series_id":"abc","url":"","title":"","progress":3,"added_at":"2026-11-01T10:00:00Z"}]}`
	a := h.importFile(c, "export.json", []byte(export))
	if a.status != http.StatusOK {
		t.Fatalf("export: %d %s", a.status, a.body)
	}
	if got := strings.Join(results(a), ","); got != "added,unsupported,unsupported" {
		t.Fatalf("export results %q: %s", got, a.testid("add-result").Text())
	}
	if !strings.Contains(a.testid("add-result").Text(), "comix/abc Exported without an address") {
		t.Errorf("the Bookmark without an address: %s", a.testid("add-result").Text())
	}
	if got := h.text(importedQuery); got != "reader-a asurascans/nano-machine 12.5" {
		t.Fatalf("bookmarks after the export: %q", got)
	}
	a = h.importFile(c, "list.txt", []byte("asurascans.com/comics/nano-machine/chapter/20\r\n\r\nhttps://asurascans.com/comics/solo-leveling\n"))
	if got := strings.Join(results(a), ","); got != "progress,added" {
		t.Fatalf("list results %q: %s", got, a.testid("add-result").Text())
	}
	if got := h.text(importedQuery); got != "reader-a asurascans/nano-machine 20\nreader-a asurascans/solo-leveling -" {
		t.Fatalf("bookmarks after the list: %q", got)
	}
}

// TestAMalformedImportGetsASentence: a file the import cannot read is a
// 400 with a sentence on the page, and adds nothing.
func TestAMalformedImportGetsASentence(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.client(readerA)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("not a protobuf"))
	zw.Close()
	for _, tc := range []struct{ name, body, want string }{
		{"broken.json", `{"version":1,"bookmarks":[{"url":`, "not this server's export"},
		{"other.json", `{"hello":"world"}`, "not this server's export"},
		{"empty.txt", "\n\n", "empty"},
		{"binary.bin", "\x00\xff\xfe", "neither"},
		{"backup.tachibk", gz.String(), "not a Mihon or Tachiyomi backup"},
	} {
		a := h.importFile(c, tc.name, []byte(tc.body))
		if a.status != http.StatusBadRequest || !strings.Contains(a.doc.Text(), tc.want) {
			t.Errorf("%s: %d, want 400 saying %q: %s", tc.name, a.status, tc.want, a.testid("add-message").Text())
		}
	}
	if got := h.text(importedQuery); got != "" {
		t.Errorf("a refused file added %q", got)
	}
}

// TestImportReadsAMihonBackup: a Mihon backup's entries from a source named
// as one of the Sites are added with their last read chapter (the url a
// path made whole with the Site's host); any other source gets a line of
// its own and adds nothing.
func TestImportReadsAMihonBackup(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.client(readerA)
	raw := mihontest.Backup(t, map[int64]string{11: "Asura Scans", 12: "MangaDex"},
		mihontest.Entry{Source: 11, URL: "/comics/nano-machine", Title: "Nano Machine", Chapters: []mihontest.Chapter{
			{Read: true, Number: 7}, {Read: true, Number: 9.5}, {Number: 30}}},
		mihontest.Entry{Source: 12, URL: "/title/abc", Title: "Elsewhere"},
		mihontest.Entry{Source: 11, URL: "https://asurascans.com/comics/solo-leveling", Title: "Solo Leveling"})
	a := h.importFile(c, "backup.tachibk", raw)
	if a.status != http.StatusOK {
		t.Fatalf("backup: %d %s", a.status, a.doc.Text())
	}
	if got := strings.Join(results(a), ","); got != "added,unsupported,added" {
		t.Fatalf("backup results %q: %s", got, a.testid("add-result").Text())
	}
	if got := h.text(importedQuery); got != "reader-a asurascans/nano-machine 9.5\nreader-a asurascans/solo-leveling -" {
		t.Fatalf("bookmarks after the backup: %q", got)
	}
	if !strings.Contains(a.testid("add-result").Text(), "From MangaDex, which is not one of the Sites here") {
		t.Errorf("the MangaDex line: %s", a.testid("add-result").Text())
	}
}

// TestAnExportImportsBackIntoAnotherReader: the JSON the export writes is a
// file the import reads (ADR 0025): Reader B gets Reader A's Bookmarks
// with their Progress.
func TestAnExportImportsBackIntoAnotherReader(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.client(readerA)
	h.post(a, "/", url.Values{"urls": {"https://asurascans.com/comics/nano-machine/chapter/12\nhttps://novelfull.com/reverend-insanity.html"}})
	export := h.get(a, "/bookmarks/export.json")
	if export.status != http.StatusOK {
		t.Fatalf("export: %d", export.status)
	}
	got := h.importFile(h.client(readerB), "export.json", []byte(export.body))
	if r := strings.Join(results(got), ","); got.status != http.StatusOK || r != "added,added" {
		t.Fatalf("import of the export: %d %q: %s", got.status, r, got.testid("add-result").Text())
	}
	if b := h.text(`SELECT string_agg(site || '/' || series_id || ' ' || coalesce(progress_num::text, '-'), E'\n' ORDER BY site, series_id) FROM bookmarks WHERE reader_id = 'reader-b'`); b != "asurascans/nano-machine 12\nnovelfull/reverend-insanity -" {
		t.Errorf("Reader B's bookmarks: %q", b)
	}
}
