package handlers

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
)

// The export (issue 24, item 6; CONTEXT.md, Export; ADR 0025): a Reader's Bookmarks as a
// download, read from the store in keyset pages and written as they come, so
// a long list is never held whole. The JSON form is the document the import
// reads back; its shape changes only with exportVersion.

// exportVersion is the JSON export's "version". Raise it with any change of
// shape an import of an older file would misread.
const exportVersion = 1

// exportBookmark is one Bookmark of the JSON export. Progress is a JSON
// number written from the canonical decimal (12.5 stays 12.5), null when
// unset, as everywhere in the API (README, "The token API"). URL is "" for
// a Series added without an address.
type exportBookmark struct {
	Site     string       `json:"site"`
	SeriesID string       `json:"series_id"`
	URL      string       `json:"url"`
	Title    string       `json:"title"`
	Progress *json.Number `json:"progress"`
	AddedAt  string       `json:"added_at"`
}

// exportCSVHeader names the CSV export's columns, in order.
var exportCSVHeader = []string{"site", "series_id", "url", "title", "progress", "added_at"}

// exportForm is a download's shape: its extension, type and writer.
type exportForm struct {
	ext, contentType string
	// write streams the Reader's export to w; each reads pages through
	// each, which calls its argument for every Bookmark.
	write func(w io.Writer, reader string, at time.Time, each func(func(store.ExportedBookmark) error) error) error
}

var (
	exportJSON = exportForm{ext: "json", contentType: "application/json; charset=utf-8", write: writeExportJSON}
	exportCSV  = exportForm{ext: "csv", contentType: "text/csv; charset=utf-8", write: writeExportCSV}
)

func writeExportJSON(w io.Writer, reader string, at time.Time, each func(func(store.ExportedBookmark) error) error) error {
	name, _ := json.Marshal(reader)
	head := `{"version":` + strconv.Itoa(exportVersion) + `,"exported_at":"` + at.UTC().Format(time.RFC3339) + `","reader":` + string(name) + `,"bookmarks":[`
	if _, err := io.WriteString(w, head); err != nil {
		return err
	}
	sep := ""
	err := each(func(b store.ExportedBookmark) error {
		row, err := json.Marshal(exportBookmark{Site: b.Site, SeriesID: b.SeriesID, URL: b.URL, Title: b.Title,
			Progress: number(b.Progress), AddedAt: b.AddedAt.UTC().Format(time.RFC3339)})
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, sep+"\n"+string(row))
		sep = ","
		return err
	})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n]}\n")
	return err
}

func writeExportCSV(w io.Writer, _ string, _ time.Time, each func(func(store.ExportedBookmark) error) error) error {
	c := csv.NewWriter(w)
	if err := c.Write(exportCSVHeader); err != nil {
		return err
	}
	err := each(func(b store.ExportedBookmark) error {
		progress := ""
		if b.Progress != nil {
			progress = *b.Progress
		}
		return c.Write([]string{csvCell(b.Site), csvCell(b.SeriesID), csvCell(b.URL), csvCell(b.Title), progress,
			b.AddedAt.UTC().Format(time.RFC3339)})
	})
	if err != nil {
		return err
	}
	c.Flush()
	return c.Error()
}

// csvCell defuses a cell a spreadsheet would run as a formula: a title comes
// from a Site's page, which anyone can write, so one starting with = + - @
// (or a tab or carriage return, which some spreadsheets skip before them)
// gets a leading apostrophe and is shown as text (OWASP, CSV injection).
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// serveExport answers the Reader's export in form, as an attachment named
// for the day. A failure before the first byte left the buffer answers
// fail; after it, the status is sent, so the download ends short (a JSON
// export then does not parse) and the failure is logged.
func serveExport(d Deps, w http.ResponseWriter, r *http.Request, readerID string, form exportForm, fail func(error)) {
	ctx := r.Context()
	rd, err := d.Store.GetReader(ctx, readerID)
	if err != nil {
		fail(err)
		return
	}
	now := d.now()
	zone := d.Zone
	if zone == nil {
		zone = time.UTC
	}
	h := w.Header()
	h.Set("Content-Type", form.contentType)
	h.Set("Content-Disposition", `attachment; filename="mangabookmark-`+now.In(zone).Format(time.DateOnly)+`.`+form.ext+`"`)
	h.Set("Cache-Control", "private, no-store")
	out := &sentCounter{w: w}
	buf := bufio.NewWriterSize(out, 32<<10)
	err = form.write(buf, rd.Name, now, exportPages(ctx, d.Store, readerID))
	if err == nil {
		err = buf.Flush()
	}
	if err == nil {
		return
	}
	if out.n == 0 {
		h.Del("Content-Disposition")
		h.Del("Content-Type")
		fail(err)
		return
	}
	d.Logger.Error("export: ended short", "route", routePattern(r), "err", err)
}

func exportPages(ctx context.Context, s *store.Store, readerID string) func(func(store.ExportedBookmark) error) error {
	return func(fn func(store.ExportedBookmark) error) error {
		return s.ExportBookmarks(ctx, readerID, store.ExportPage, fn)
	}
}

// sentCounter counts the bytes that reached the ResponseWriter: none means
// the status is still ours to choose.
type sentCounter struct {
	w http.ResponseWriter
	n int
}

func (c *sentCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// handleExport is GET /bookmarks/export.json and .csv for the signed-in Reader.
func handleExport(d Deps, form exportForm) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveExport(d, w, r, viewerFrom(r.Context()).ID, form, func(err error) {
			failStore(w, r, d.Logger, err, "Your export could not be made. Try again in a moment.", "export", "form", form.ext)
		})
	})
}

// handleExport is GET /api/v1/bookmarks/export.json: the same document for a
// token's Reader.
func (api *apiServer) handleExport(w http.ResponseWriter, r *http.Request) {
	serveExport(api.d, w, r, tokenFrom(r.Context()).ReaderID, exportJSON, func(err error) {
		api.internal(w, r, "export", err)
	})
}
