package handlers

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The import's readers. Each reads its file as a stream, one entry at a
// time, and refuses the file the moment an entry breaks a rule: an empty
// entry, one past maxImportEntry bytes, or one past maxImportEntries. So a
// file costs one entry's bytes and the entries kept, never its whole size
// (CONTEXT.md, What the server promises: a hostile import).

// maxImportEntry bounds the bytes of one entry of a JSON or CSV export (a
// Bookmark: its Site, id, address, title, Progress and time) and of one
// line of a list. An exported Bookmark is a few hundred bytes.
const maxImportEntry = 16 << 10

// maxImportAddress bounds an entry's address, as the add box's paste does
// (maxAddBody): an entry's address is kept until it is added.
const maxImportAddress = 2 << 10

// entryWindow reads r, at most size bytes between two calls of next: an
// entry past it is errEntryTooLarge, however the decoder above buffers. The
// body's own failure (a client gone, a body over its cap) is kept in err.
type entryWindow struct {
	r          io.Reader
	left, size int
	err        error
}

var errEntryTooLarge = errors.New("import: an entry larger than maxImportEntry")

func newEntryWindow(r io.Reader) *entryWindow {
	return &entryWindow{r: r, left: maxImportEntry, size: maxImportEntry}
}

func (w *entryWindow) Read(p []byte) (int, error) {
	if w.left <= 0 {
		return 0, errEntryTooLarge
	}
	if len(p) > w.left {
		p = p[:w.left]
	}
	n, err := w.r.Read(p)
	w.left -= n
	if err != nil && err != io.EOF {
		w.err = err
	}
	return n, err
}

// next starts the next entry's window.
func (w *entryWindow) next() { w.left = w.size }

// refuse is the answer to a reader's failure: the body's own error when
// reading it failed (a 413 or an unreadable upload), else the sentence.
func (w *entryWindow) refuse(sentence string) error {
	if w.err != nil {
		return w.err
	}
	return errImport(sentence)
}

// jsonProgress is an exported Bookmark's Progress: none when left out or
// null, else a JSON number by the API's own check (parseChapterValue).
func jsonProgress(raw json.RawMessage) (string, bool) {
	if absent(raw) {
		return "", true
	}
	return parseChapterValue(raw)
}

// exportedBookmark is one Bookmark of the JSON export as the import reads
// it. Progress is kept raw: it must be a JSON number (parseChapterValue).
type exportedBookmark struct {
	Site     string          `json:"site"`
	SeriesID string          `json:"series_id"`
	URL      string          `json:"url"`
	Progress json.RawMessage `json:"progress"`
}

const notTheExport = "That file starts like JSON but is not this server's export: "

// readExportJSON reads this product's JSON export (exportVersion 1) key by
// key, and its Bookmarks one at a time.
func readExportJSON(r io.Reader) ([]importEntry, error) {
	w := newEntryWindow(r)
	dec := json.NewDecoder(w)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, exportRefusal(w, err)
	}
	var entries []importEntry
	version := 0
	for dec.More() {
		w.next()
		key, err := dec.Token()
		if err != nil {
			return nil, exportRefusal(w, err)
		}
		switch key {
		case "version":
			err = dec.Decode(&version)
		case "bookmarks":
			entries, err = readExportedBookmarks(dec, w, entries)
		default:
			err = dec.Decode(new(json.RawMessage))
		}
		if err != nil {
			return nil, exportRefusal(w, err)
		}
	}
	if version != importVersion {
		return nil, errImport("That JSON file is not this server's export (version 1). Nothing was imported.")
	}
	return entries, nil
}

// exportRefusal is a failure inside the export's object: the entry's own
// refusal, else the decoder's complaint.
func exportRefusal(w *entryWindow, err error) error {
	var no errImport
	switch {
	case w.err != nil:
		return w.err
	case errors.As(err, &no):
		return err
	case errors.Is(err, errEntryTooLarge):
		return errImport("That file holds a Bookmark larger than 16 KiB: it is not this server's export. Nothing was imported.")
	}
	return errImport(notTheExport + jsonProblem(err) + ". Nothing was imported.")
}

// readExportedBookmarks reads the "bookmarks" array onto entries.
func readExportedBookmarks(dec *json.Decoder, w *entryWindow, entries []importEntry) ([]importEntry, error) {
	t, err := dec.Token()
	if err != nil || t == nil {
		return entries, err
	}
	if t != json.Delim('[') {
		return entries, errImport("That file's bookmarks are not a list: it is not this server's export. Nothing was imported.")
	}
	for dec.More() {
		w.next()
		var bm exportedBookmark
		if err := dec.Decode(&bm); err != nil {
			return entries, err
		}
		e, err := exportedEntry(len(entries)+1, bm.Site, bm.SeriesID, bm.URL, bm.Progress, jsonProgress)
		if err != nil {
			return entries, err
		}
		entries = append(entries, e)
	}
	_, err = dec.Token()
	return entries, err
}

// exportedEntry is the entry of the n-th Bookmark of an export (JSON or
// CSV): refused when it is empty or past the cap; a line of its own when
// it cannot be added (no address, an address too long, a Progress that is
// not a chapter number by the API's own check).
func exportedEntry[P any](n int, site, seriesID, url string, progress P, chapter func(P) (string, bool)) (importEntry, error) {
	switch {
	case n > maxImportEntries:
		return importEntry{}, errImport("That file holds more than 10,000 Bookmarks: at most 10,000 at once. Nothing was imported.")
	case site == "" && seriesID == "" && url == "":
		return importEntry{}, errImport("Bookmark " + strconv.Itoa(n) + " of that file is empty: it is not this server's export. Nothing was imported.")
	case url == "":
		// A Series added by id alone is exported with no address (ADR
		// 0025); the import adds by address only.
		return importEntry{Line: shownLine(site + "/" + seriesID),
			Skip: "Exported without an address, so it cannot be imported: add it by its address. Nothing was added."}, nil
	case len(url) > maxImportAddress:
		return importEntry{Line: shownLine(url), Skip: "That address is longer than 2 KiB: no Site's address is. Nothing was added."}, nil
	}
	e := importEntry{Line: url, URL: url}
	c, ok := chapter(progress)
	switch {
	case !ok:
		e.Line, e.SkipWord = shownLine(url), string(apiNotAChapter)
		e.Skip = "Its progress is not a chapter number (a number such as 12 or 12.5, not negative, at most seven digits and four decimals). Nothing was added."
	case c != "":
		e.Chapter = c
		e.Line = shownLine(url) + " (chapter " + c + ")"
	}
	return e, nil
}

// readExportCSV reads this product's CSV export: the header row
// (exportCSVHeader), then one Bookmark a row.
func readExportCSV(r io.Reader) ([]importEntry, error) {
	w := newEntryWindow(r)
	c := csv.NewReader(w)
	c.ReuseRecord = true
	c.FieldsPerRecord = len(exportCSVHeader)
	c.Comment = importComment // a Site name never starts with it
	var entries []importEntry
	for first := true; ; first = false {
		w.next()
		rec, err := c.Read()
		switch {
		case err == io.EOF:
			return entries, nil
		case errors.Is(err, errEntryTooLarge):
			return nil, w.refuse("That file holds a row larger than 16 KiB: it is not this server's CSV export. Nothing was imported.")
		case err != nil:
			return nil, w.refuse("That file starts like this server's CSV export but row " + strconv.Itoa(len(entries)+2) + " cannot be read. Nothing was imported.")
		case first:
			continue
		}
		e, err := exportedEntry(len(entries)+1, rec[0], rec[1], strings.Clone(rec[2]), rec[4], csvChapter)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
}

// csvChapter is a CSV cell's Progress: "" for none, else the chapter check
// every chapter number goes through.
func csvChapter(cell string) (string, bool) {
	if strings.TrimSpace(cell) == "" {
		return "", true
	}
	return chapterText(cell)
}

// importComment starts a line of a list or CSV import that is a note to
// its writer, never an entry: no address and no Site name starts with it.
const importComment = '#'

// readAddressList reads a text file of addresses, one per line (a carriage
// return ends a line too, as in the add box); a blank or comment line is
// no entry.
func readAddressList(r io.Reader) ([]importEntry, error) {
	w := newEntryWindow(r)
	s := bufio.NewScanner(w)
	s.Buffer(make([]byte, 4<<10), maxImportEntry)
	s.Split(scanLines)
	var entries []importEntry
	for w.next(); s.Scan(); w.next() {
		b := s.Bytes()
		if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
			return nil, w.refuse("That file is neither this server's JSON export, a Mihon backup, nor a text list of addresses. Nothing was imported.")
		}
		l := strings.TrimSpace(string(b))
		switch {
		case l == "" || l[0] == importComment: // a note, not an entry
			continue
		case len(entries) == maxImportEntries:
			return nil, errImport("That file holds more than 10,000 lines: at most 10,000 at once. Nothing was imported.")
		case len(l) > maxImportAddress:
			entries = append(entries, importEntry{Line: shownLine(l), Skip: "That address is longer than 2 KiB: no Site's address is. Nothing was added."})
			continue
		}
		entries = append(entries, importEntry{Line: l, URL: l})
	}
	if err := s.Err(); err != nil {
		return nil, w.refuse("That file holds a line longer than 16 KiB: a list holds one address per line. Nothing was imported.")
	}
	if len(entries) == 0 {
		return nil, errImport("That file is empty: it should hold one Series or chapter address per line. Nothing was imported.")
	}
	return entries, nil
}

// scanLines splits at "\n" or "\r", so "\r\n" leaves an empty line, which
// the list skips.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
