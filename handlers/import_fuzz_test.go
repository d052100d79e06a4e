package handlers

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// importFuzzBudget is what reading any one file may allocate, beside a few
// times the file's own size: one entry's window and the entries kept.
const importFuzzBudget = 32 << 20

// FuzzImportDecoders feeds the same bytes to each of the import's readers
// (the JSON export, the CSV export, a list, a Mihon backup unzipped and as
// sent) and to the sniffing that picks one: each answers entries or a
// sentence, never a panic or another error, within importFuzzBudget; it
// keeps at most 10,000 entries, and every Progress it keeps passed the
// API's chapter check.
func FuzzImportDecoders(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"bookmarks":[{"site":"asurascans","series_id":"x","url":"https://asurascans.com/comics/x","progress":12.5}]}`,
		`{"version":1,"bookmarks":[{},{}]}`,
		`{"version":1,"bookmarks":[{"url":"u","progress":"5"},{"url":"v","progress":3.4e38}]}`,
		`{"bookmarks":null,"version":1}`,
		"site,series_id,url,title,progress,added_at\nasurascans,x,https://asurascans.com/comics/x,X,12.5,\n,,,,,\n",
		"https://asurascans.com/comics/x\r\n\nasurascans.com/comics/y/chapter/3\n",
		"\ufeff\x00\xff",
		"\x0a\x00\x0a\x00",
		"\x0a\x05\x12\x03/ab\xaa\x06\x05\x0a\x03abc",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(b)
		zw.Close()
		readers := map[string]func() ([]importEntry, error){
			"json":  func() ([]importEntry, error) { return readExportJSON(bytes.NewReader(b)) },
			"csv":   func() ([]importEntry, error) { return readExportCSV(bytes.NewReader(b)) },
			"list":  func() ([]importEntry, error) { return readAddressList(bytes.NewReader(b)) },
			"mihon": func() ([]importEntry, error) { return readMihon(bytes.NewReader(gz.Bytes())) },
			"sniff": func() ([]importEntry, error) { return sniffImport(bytes.NewReader(b)) },
			"sent":  func() ([]importEntry, error) { return sniffImport(bytes.NewReader(append([]byte{0x1f, 0x8b}, b...))) },
		}
		for name, read := range readers {
			var entries []importEntry
			var err error
			if used := allocatedBy(func() { entries, err = read() }); used > importFuzzBudget+uint64(8*len(b)) {
				t.Fatalf("%s: reading %d bytes allocated %d MB", name, len(b), used>>20)
			}
			checkImport(t, name, entries, err)
		}
	})
}

// checkImport holds what every reader promises of its answer.
func checkImport(t *testing.T, name string, entries []importEntry, err error) {
	t.Helper()
	var no errImport
	if err != nil && (!errors.As(err, &no) || !strings.HasSuffix(string(no), "Nothing was imported.")) {
		t.Fatalf("%s: %v is not a sentence", name, err)
	}
	if len(entries) > maxImportEntries {
		t.Fatalf("%s: kept %d entries", name, len(entries))
	}
	for _, e := range entries {
		if len(e.URL) > maxImportAddress || len(e.Line) > maxImportAddress+64 || !utf8.ValidString(e.Line) && e.URL != "" {
			t.Fatalf("%s: kept an entry of %d and %d bytes", name, len(e.URL), len(e.Line))
		}
		if c, ok := chapterText(e.Chapter); e.Chapter != "" && (!ok || c != e.Chapter) {
			t.Fatalf("%s: kept Progress %q, which the API would refuse", name, e.Chapter)
		}
	}
}

// allocatedBy is how many bytes the process allocated while f ran (the
// fuzz target is not parallel).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// ReadImportFile reads a file as the import does, without adding it: how
// many entries it holds, or the refusal. For the memory benchmark, which
// measures the readers apart from the adding and the answer page.
func ReadImportFile(r io.Reader) (int, error) {
	entries, err := sniffImport(r)
	return len(entries), err
}
