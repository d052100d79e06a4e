package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// Every sentence about deleting a Series says what the code does
// (store.RemoveSeries): an orphan goes at once, a bookmarked Series after a
// confirm naming its Readers, with their Bookmarks. No sentence says only
// an orphan can be deleted, beside a Delete control that deletes a
// bookmarked one.
func TestEverySentenceAboutDeletingASeriesSaysWhatDeleteDoes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	storetest.Insert(t, h.pool, storetest.Bookmark{Reader: "r1", Site: word.Asurascans, Series: "gate-refused", Progress: "2", UpdatedAt: t0})
	c := h.owner()
	list := h.get(c, "/admin/series?filter=orphan")
	orphan := list.find("#filter-meaning-orphan").Text()
	if strings.Contains(orphan, "Only an orphan") || !strings.Contains(orphan, "Delete removes it at once") ||
		!strings.Contains(orphan, "a bookmarked Series is deleted too") {
		t.Errorf("the orphan filter says %q, want that an orphan goes at once and a bookmarked Series after a confirm", orphan)
	}
	base := "/admin/series/asurascans/gate-refused"
	d := h.get(c, base)
	if txt := d.doc.Text(); strings.Contains(txt, "if it is an orphan") || !strings.Contains(d.testid("delete-control").Text(), "1 Reader tracks it") {
		t.Errorf("the detail page of a bookmarked, unfetchable Series: delete control %q; says 'if it is an orphan': %v",
			d.testid("delete-control").Text(), strings.Contains(txt, "if it is an orphan"))
	}
	if a := h.post(c, base+"/delete", url.Values{"step": {"confirm"}, "confirm": {"yes"}}); a.status != http.StatusOK && a.status != http.StatusSeeOther {
		t.Fatalf("the confirmed delete: %d", a.status)
	}
	if n := h.text(`SELECT count(*)::text FROM series WHERE series_id = 'gate-refused'`); n != "0" {
		t.Errorf("the bookmarked Series is still there after its confirmed delete")
	}
}
