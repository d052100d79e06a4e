package handlers_test

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// hostileTitle is a title a Site's page could carry: a spreadsheet would run
// it as a formula.
const hostileTitle = `=HYPERLINK("https://evil.test","click")`

// seedExportReaders: Ada (r1) bookmarks two Series, one with Progress 12.5
// and one whose page-derived title is a formula; Bob (r2) bookmarks a third
// that must never appear in Ada's export.
func seedExportReaders(h *harness) {
	h.t.Helper()
	storetest.Ensure(h.t, h.pool, storetest.Reader{ID: "r1", Name: "Ada"}, storetest.Reader{ID: "r2", Name: "Bob"})
	storetest.Insert(h.t, h.pool,
		storetest.Series{Site: word.Asurascans, ID: "solo", URL: "https://asurascans.com/comics/solo", Title: "Solo", Kind: "manga"},
		storetest.Series{Site: word.Novelfull, ID: "evil", URL: "https://novelfull.com/evil.html", Title: hostileTitle, Kind: "novel"},
		storetest.Series{Site: word.Asurascans, ID: "bobs", URL: "https://asurascans.com/comics/bobs", Title: "Bob's own", Kind: "manga"})
	storetest.Insert(h.t, h.pool,
		storetest.Bookmark{Reader: "r1", Site: word.Asurascans, Series: "solo", Progress: "12.5", CreatedAt: t0.Add(-48 * time.Hour), UpdatedAt: t0},
		storetest.Bookmark{Reader: "r1", Site: word.Novelfull, Series: "evil", CreatedAt: t0.Add(-time.Hour), UpdatedAt: t0},
		storetest.Bookmark{Reader: "r2", Site: word.Asurascans, Series: "bobs", CreatedAt: t0, UpdatedAt: t0})
}

type exportDoc struct {
	Version    int    `json:"version"`
	ExportedAt string `json:"exported_at"`
	Reader     string `json:"reader"`
	Bookmarks  []struct {
		Site     string       `json:"site"`
		SeriesID string       `json:"series_id"`
		URL      string       `json:"url"`
		Title    string       `json:"title"`
		Progress *json.Number `json:"progress"`
		AddedAt  string       `json:"added_at"`
	} `json:"bookmarks"`
}

// checkExportJSON asserts the JSON export of Ada's seeded Bookmarks.
func checkExportJSON(t *testing.T, status int, header http.Header, body string) {
	t.Helper()
	if status != http.StatusOK || !strings.HasPrefix(header.Get("Content-Type"), "application/json") {
		t.Fatalf("answered %d %q: %s", status, header.Get("Content-Type"), body)
	}
	if got := header.Get("Content-Disposition"); got != `attachment; filename="mangabookmark-2026-11-30.json"` {
		t.Errorf("Content-Disposition %q", got)
	}
	var doc exportDoc
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("not the export document: %v\n%s", err, body)
	}
	if doc.Version != 1 || doc.ExportedAt != "2026-11-30T12:00:00Z" || doc.Reader != "Ada" || len(doc.Bookmarks) != 2 {
		t.Fatalf("document %+v", doc)
	}
	solo, evil := doc.Bookmarks[0], doc.Bookmarks[1] // key order: site, then series_id
	if solo.Site != "asurascans" || solo.SeriesID != "solo" || solo.URL != "https://asurascans.com/comics/solo" || solo.Title != "Solo" ||
		solo.Progress == nil || solo.Progress.String() != "12.5" || solo.AddedAt != "2026-11-28T12:00:00Z" {
		t.Errorf("solo %+v", solo)
	}
	if evil.Site != "novelfull" || evil.Title != hostileTitle || evil.Progress != nil || evil.AddedAt != "2026-11-30T11:00:00Z" {
		t.Errorf("evil %+v", evil)
	}
	if !strings.Contains(body, `"progress":12.5,`) {
		t.Errorf("Progress is not the JSON number 12.5:\n%s", body)
	}
	if strings.Contains(body, "bobs") {
		t.Errorf("another Reader's Bookmark is in the export:\n%s", body)
	}
}

func TestTheJSONExportHoldsTheReadersBookmarksAndNoOneElses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedExportReaders(h)
	a := h.get(h.client("r1"), "/bookmarks/export.json")
	checkExportJSON(t, a.status, a.header, a.body)
}

func TestTheCSVExportHasAHeaderAndDefusesAFormulaTitle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedExportReaders(h)
	a := h.get(h.client("r1"), "/bookmarks/export.csv")
	if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("answered %d %q: %s", a.status, a.header.Get("Content-Type"), a.body)
	}
	if got := a.header.Get("Content-Disposition"); got != `attachment; filename="mangabookmark-2026-11-30.csv"` {
		t.Errorf("Content-Disposition %q", got)
	}
	rows, err := csv.NewReader(strings.NewReader(a.body)).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, a.body)
	}
	want := [][]string{
		{"site", "series_id", "url", "title", "progress", "added_at"},
		{"asurascans", "solo", "https://asurascans.com/comics/solo", "Solo", "12.5", "2026-11-28T12:00:00Z"},
		{"novelfull", "evil", "https://novelfull.com/evil.html", "'" + hostileTitle, "", "2026-11-30T11:00:00Z"},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d:\n%s", len(rows), len(want), a.body)
	}
	for i := range want {
		if strings.Join(rows[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d = %q, want %q", i, rows[i], want[i])
		}
	}
}

func TestTheExportAsksWhoIsAskingFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedExportReaders(h)
	for _, path := range []string{"/bookmarks/export.json", "/bookmarks/export.csv"} {
		a := h.get(anonymous(), path)
		if a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/login?next=") || strings.Contains(a.body, "Solo") {
			t.Errorf("%s anonymous: %d %q %s", path, a.status, a.header.Get("Location"), a.body)
		}
	}
	if a := h.api(http.MethodGet, "/api/v1/bookmarks/export.json", "", ""); a.status != http.StatusUnauthorized || a.word() != "token_missing" {
		t.Errorf("API without a token: %d %s", a.status, a.raw)
	}
}

func TestTheAPIExportIsTheSameDocumentForTheTokensReader(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedExportReaders(h)
	a := h.api(http.MethodGet, "/api/v1/bookmarks/export.json", h.apiToken("r1", "export"), "")
	checkExportJSON(t, a.status, a.header, a.raw)
}

func TestHomeLinksBothExports(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedExportReaders(h)
	a := h.get(h.client("r1"), "/")
	for id, href := range map[string]string{"export-json": "/bookmarks/export.json", "export-csv": "/bookmarks/export.csv"} {
		if got, _ := a.testid(id).Attr("href"); got != href {
			t.Errorf("%s links %q, want %q", id, got, href)
		}
	}
}
