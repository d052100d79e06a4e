package handlers

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// The import (issue 24, item 7): a file on / holding this product's JSON
// export or a list of addresses, one per line. Each entry is added the way
// the add box adds a line (addLine, store.AddAddress): its own transaction,
// so an entry is added whole or not at all, and never half a Bookmark.

// maxImportFile bounds the upload: a 10,000-entry export is about 2 MiB,
// so 20 MiB leaves room. The file is read as it arrives, never held whole.
const maxImportFile = 20 << 20

// maxImportEntries bounds the entries of one file (issue 24, item 7: a
// 10,000-entry file finishes within 30 s).
const maxImportEntries = 10000

// importEntry is one entry of an imported file: the address it names and,
// from an export, the chapter its Progress was at ("" for none).
type importEntry struct {
	Line, URL, Chapter string
	// Skip, when set, is why the entry is not added (a Mihon source that
	// is none of the Sites); it is that entry's line, and SkipWord its
	// word ("" is unsupported).
	Skip, SkipWord string
}

// importVersion is the export's "version" this import reads (the export's
// own shape, issue 24, item 6).
const importVersion = 1

// errImport is a file the import cannot read; its text is the sentence the
// Reader is shown.
type errImport string

func (e errImport) Error() string { return string(e) }

// handleImport is POST /bookmarks/import: the Reader's file, its entries
// added one by one, and the page (or, for htmx, the box and the list) with
// a line per entry saying what happened to it. A file that cannot be read
// is a 400 with a sentence; nothing of it was added.
func handleImport(d Deps) http.Handler {
	running := newImportGate(importsPerServer)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		box := readerAddBox()
		status := http.StatusOK
		done, busy := running.enter(viewerFrom(r.Context()).ID)
		if busy != "" {
			w.Header().Set("Retry-After", strconv.Itoa(importRetryAfter))
			box.Message = busy
			answerAddBox(d, w, r, http.StatusTooManyRequests, box, store.BookmarkQuery{Limit: importListRows}, "my bookmarks: list after a busy import")
			return
		}
		defer done()
		entries, err := readImport(w, r)
		switch {
		case err != nil:
			box.Message, status = importRefusal(err)
		default:
			status = importEntries(d, r, entries, &box)
		}
		// The request's own database budget (dbDeadline) went on the
		// entries: the list after them gets one of its own.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), d.requestTimeout())
		defer cancel()
		answerAddBox(d, w, r.WithContext(ctx), status, box, store.BookmarkQuery{Limit: importListRows}, "my bookmarks: list after import")
	})
}

// importRefusal is the sentence and status for a file that was not read.
func importRefusal(err error) (string, int) {
	var tooLarge *http.MaxBytesError
	var no errImport
	switch {
	case errors.As(err, &tooLarge):
		return "That file is too large: at most 20 MiB. Nothing was imported.", http.StatusRequestEntityTooLarge
	case errors.As(err, &no):
		return string(no), http.StatusBadRequest
	}
	return "That upload could not be read: send one file in the field “file”. Nothing was imported.", http.StatusBadRequest
}

// importBudget bounds one import's database work: a 10,000-entry file
// finishes well within it (BenchmarkImport10000); entries left when it is
// spent are not tried, and say so.
const importBudget = 60 * time.Second

// importEntries adds each entry for the signed-in Reader, counting its
// result on box (importTally); the status is 503 when an entry could not
// be saved. Each entry has DATABASE_REQUEST_TIMEOUT of its own rather than
// a share of the request's (dbDeadline), and the whole import importBudget:
// an entry is its own transaction, so importing the file again adds only
// what is left.
func importEntries(d Deps, r *http.Request, entries []importEntry, box *components.AddBox) int {
	reader := viewerFrom(r.Context()).ID
	end := time.Now().Add(importBudget)
	tally := newImportTally()
	arrive := newArrivals(d)
	next := make(chan int)
	var wg sync.WaitGroup
	for range importWorkers {
		wg.Go(func() {
			for i := range next {
				tally.add(i, importTimed(d, r, arrive, reader, entries[i], end))
			}
		})
	}
	for i := range entries {
		next <- i
	}
	close(next)
	wg.Wait()
	return tally.fill(box, len(entries))
}

// importWorkers is how many entries are added at once: each is still its
// own transaction, and the pool (DATABASE_POOL_SIZE, 8) keeps connections
// for the pages.
const importWorkers = 3

// importTimed adds one entry with a database budget of its own, or says it
// was not tried once the import's budget is spent.
func importTimed(d Deps, r *http.Request, arrive *arrivals, reader string, e importEntry, end time.Time) components.AddResult {
	if time.Now().After(end) {
		return components.AddResult{Line: shownLine(e.Line), Word: "failed", Fault: true,
			Sentence: "Not tried: the import ran out of time. Import the file again to add the rest."}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), d.requestTimeout())
	defer cancel()
	return importEntryOne(d, r.WithContext(ctx), arrive, reader, e)
}

// importEntryOne adds one entry: a plain address as the add box does; an
// exported Bookmark with its Progress set in the same transaction.
func importEntryOne(d Deps, r *http.Request, arrive *arrivals, reader string, e importEntry) components.AddResult {
	if e.Skip != "" {
		return components.AddResult{Line: shownLine(e.Line), Word: cmp.Or(e.SkipWord, "unsupported"), Fault: true, Sentence: e.Skip}
	}
	if e.Chapter == "" {
		res := addLine(d, r, arrive, reader, e.URL)
		res.Line = shownLine(e.Line)
		return res
	}
	out := components.AddResult{Line: shownLine(e.Line)}
	c, err := adapters.RecogniseChapter(adapters.Pasted(e.URL))
	if err != nil {
		out.Word, out.Fault = "unsupported", true
		out.Sentence = addressRefusal(err) + " Nothing was added."
		return out
	}
	c.Number = e.Chapter
	req := store.AddRequest{Site: c.Site, SeriesID: c.SeriesID, URL: c.URL, Kind: string(word.Site(c.Site).Kind()),
		ReaderID: reader, Chapter: e.Chapter}
	res, err := d.Store.AddAddress(r.Context(), req, d.now())
	if err != nil {
		d.Logger.Error("import failed", "site", c.Site, "series_id", c.SeriesID, "err", err)
		out.Word, out.Fault = "failed", true
		out.Sentence = "Could not be added just now; nothing of it was saved. Try again."
		return out
	}
	out.Word, out.Sentence = addSentence(false, c, res, func() string { return arrive.of(r, c.Site) })
	return out
}

// shownLine is a line as its result shows it: at most 120 characters.
func shownLine(s string) string {
	if len(s) <= 120 {
		return s // no more bytes than characters: nothing to count
	}
	if r := []rune(s); len(r) > 120 {
		return string(r[:120]) + "…"
	}
	return s
}

// readImport reads the upload's part "file" as it arrives (no other part
// is held, and the file is never spooled whole) and tells its form by its
// first bytes: gzip (a Mihon backup), "{" (the JSON export), the CSV
// export's header, else a list of addresses.
func readImport(w http.ResponseWriter, r *http.Request) ([]importEntry, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxImportFile+64<<10)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, err
	}
	for {
		p, err := mr.NextPart()
		if err != nil {
			return nil, err
		}
		if p.FormName() == "file" {
			defer p.Close()
			return sniffImport(&cappedFile{r: p, left: maxImportFile})
		}
	}
}

// sniffImport reads a file's entries by its form.
func sniffImport(f io.Reader) ([]importEntry, error) {
	br := bufio.NewReaderSize(f, 4<<10)
	if head, _ := br.Peek(3); bytes.Equal(head, []byte("\ufeff")) {
		br.Discard(3)
	}
	head, _ := br.Peek(512)
	t := skipNotes(head)
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return readMihon(br)
	case len(t) > 0 && t[0] == '{':
		return readExportJSON(br)
	case bytes.HasPrefix(t, []byte(strings.Join(exportCSVHeader, ","))):
		return readExportCSV(br)
	}
	return readAddressList(br)
}

// skipNotes is head past its leading blank and comment lines, so a CSV
// export with a note above its header is still read as one.
func skipNotes(head []byte) []byte {
	for {
		head = bytes.TrimLeft(head, " \t\r\n")
		if len(head) == 0 || head[0] != importComment {
			return head
		}
		i := bytes.IndexAny(head, "\r\n")
		if i < 0 {
			return nil
		}
		head = head[i:]
	}
}

// cappedFile reads at most left bytes of a file; a byte more is the 413.
type cappedFile struct {
	r    io.Reader
	left int64
}

func (c *cappedFile) Read(p []byte) (int, error) {
	if c.left <= 0 {
		if n, _ := c.r.Read(make([]byte, 1)); n > 0 {
			return 0, &http.MaxBytesError{Limit: maxImportFile}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// jsonProblem is the decoder's complaint, short and without Go's type names.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return "it breaks off or is malformed at byte " + strconv.FormatInt(syn.Offset, 10)
	case errors.As(err, &typ):
		return "its field " + typ.Field + " has the wrong kind of value"
	}
	return "it ends early"
}

// importsPerServer is how many imports this process runs at once, and a
// Reader may run one: an import holds a file's entries and three of the
// pool's connections for up to importBudget. Another is 429.
const importsPerServer = 2

// importRetryAfter is the Retry-After of a busy import, in seconds.
const importRetryAfter = 30

// importGate counts the imports running, in all and per Reader.
type importGate struct {
	mu      sync.Mutex
	max     int
	running map[string]bool
}

func newImportGate(max int) *importGate {
	return &importGate{max: max, running: map[string]bool{}}
}

// enter takes a place for reader's import, and done gives it back; busy is
// the sentence refusing it when there is none.
func (g *importGate) enter(reader string) (done func(), busy string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.running[reader]:
		return nil, "An import of yours is still running: wait for it to finish, then import this file. Nothing of it was imported."
	case len(g.running) >= g.max:
		return nil, "Other imports are running on this server just now: try this file again in a minute. Nothing of it was imported."
	}
	g.running[reader] = true
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		delete(g.running, reader)
	}, ""
}
