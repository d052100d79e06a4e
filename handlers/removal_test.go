package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// Issue 24, item 1: the owner removes a bookmarked Series after a confirm
// that names its Readers; their Bookmarks go with it, and each of them is
// told once on /.
func TestTheOwnerRemovesABookmarkedSeriesAfterAConfirmAndEachReaderIsToldOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	storetest.Ensure(t, h.pool, storetest.Reader{ID: "r2", Name: "Reader Two"})
	storetest.Insert(t, h.pool, storetest.Bookmark{Reader: "r2", Site: word.Asurascans, Series: "healthy", Progress: "5", UpdatedAt: t0})
	c := h.owner()
	base := "/admin/series/asurascans/healthy"
	count := func(sql string) int {
		t.Helper()
		var n int
		if err := h.pool.QueryRow(context.Background(), sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	tallyBefore := count(`SELECT count(*) FROM series WHERE site = 'asurascans'`)

	d := h.get(c, base)
	if !strings.Contains(d.testid("delete-control").Text(), "2 Readers track it") {
		t.Errorf("the Delete control does not say who tracks it: %q", d.testid("delete-control").Text())
	}
	before := h.snapshot()
	a := h.post(c, base+"/delete", nil, "HX-Request", "true")
	if a.status != http.StatusOK || !strings.Contains(a.testid("delete-confirm").Text(), "2 Readers track it") {
		t.Fatalf("first POST: %d, confirm %q", a.status, a.testid("delete-confirm").Text())
	}
	if a.find(`[data-testid="delete-confirm-box"]:checked`).Length() != 0 {
		t.Errorf("the confirm box is pre-ticked")
	}
	a = h.post(c, base+"/delete", url.Values{"step": {"confirm"}})
	if a.status != http.StatusUnprocessableEntity || a.testid("delete-confirm").Length() != 1 || !strings.Contains(a.doc.Text(), "Tick the box") {
		t.Errorf("confirm without the box: %d", a.status)
	}
	if h.snapshot() != before {
		t.Fatalf("the steps before the confirmation changed rows")
	}
	// Cross-site: the owner's own confirmation from another origin is refused.
	a = h.post(c, base+"/delete", url.Values{"step": {"confirm"}, "confirm": {"yes"}}, "Origin", "https://evil.example")
	if a.status != http.StatusForbidden || h.snapshot() != before {
		t.Errorf("a cross-site confirmation: %d, or rows changed", a.status)
	}
	a = h.do(anonymous(), http.MethodPost, base+"/delete", url.Values{"step": {"confirm"}, "confirm": {"yes"}})
	if a.status == http.StatusOK || h.snapshot() != before {
		t.Errorf("an anonymous confirmation: %d, or rows changed", a.status)
	}

	a = h.post(c, base+"/delete", url.Values{"step": {"confirm"}, "confirm": {"yes"}})
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/admin/series" {
		t.Fatalf("confirmed delete: %d %q", a.status, a.header.Get("Location"))
	}
	if h.get(c, base).status != http.StatusNotFound {
		t.Errorf("the Series survived")
	}
	if n := count(`SELECT count(*) FROM bookmarks WHERE series_id = 'healthy'`); n != 0 {
		t.Errorf("%d Bookmarks survived", n)
	}
	if n := count(`SELECT count(*) FROM bookmarks WHERE series_id <> 'healthy'`); n == 0 {
		t.Errorf("other Bookmarks went too")
	}
	if n := count(`SELECT count(*) FROM series WHERE site = 'asurascans'`); n != tallyBefore-1 {
		t.Errorf("%d Series left, want %d", n, tallyBefore-1)
	}
	if !strings.Contains(h.logs.String(), "series deleted") {
		t.Errorf("no log line for the deletion")
	}

	for _, r := range []string{"r1", "r2"} {
		rc := h.client(r)
		home := h.get(rc, "/")
		if got := home.testid("owner-removed").Text(); got != "The owner removed Healthy Work." {
			t.Errorf("%s's first home page: %q", r, got)
		}
		if h.get(rc, "/").testid("owner-removed").Length() != 0 {
			t.Errorf("%s is told twice", r)
		}
	}
	if h.get(h.client(ownerID), "/").testid("owner-removed").Length() != 0 {
		t.Errorf("the owner, who tracked nothing, is told")
	}
}

// Issue 24, item 1: bulk Delete joins bulk Finish and Poll behind the same
// confirm, which names how many Readers track each bookmarked Series.
func TestABulkDeleteNeedsItsConfirmAndTellsEachReaderOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	picks := url.Values{"action": {"delete"}, "pick": {"asurascans:completed", "asurascans:completed-failing"}, "back": {"/admin/series"}}
	before := h.snapshot()
	a := h.post(c, "/admin/series/bulk", picks, "HX-Request", "true")
	if a.status != http.StatusOK || a.testid("bulk-pick").Length() != 2 || !strings.Contains(a.testid("bulk-confirm").Text(), "1 Reader tracks it.") {
		t.Fatalf("the bulk delete's confirm: %d %.400s", a.status, a.body)
	}
	picks.Set("step", "confirm")
	if a = h.post(c, "/admin/series/bulk", picks); a.status != http.StatusUnprocessableEntity || h.snapshot() != before {
		t.Fatalf("confirm without the box: %d, or rows changed", a.status)
	}
	picks.Set("confirm", "yes")
	if a = h.post(c, "/admin/series/bulk", picks, "Origin", "https://evil.example"); a.status != http.StatusForbidden || h.snapshot() != before {
		t.Fatalf("a cross-site bulk delete: %d, or rows changed", a.status)
	}
	if a = h.post(c, "/admin/series/bulk", picks); a.status != http.StatusSeeOther {
		t.Fatalf("confirmed bulk delete: %d", a.status)
	}
	for _, id := range []string{"completed", "completed-failing"} {
		if h.get(c, "/admin/series/asurascans/"+id).status != http.StatusNotFound {
			t.Errorf("%s survived", id)
		}
	}
	if h.get(c, "/admin/series/asurascans/healthy").status != http.StatusOK {
		t.Errorf("an unselected Series went")
	}
	r1 := h.client("r1")
	if got := h.get(r1, "/").testid("owner-removed").Text(); got != "The owner removed Completed Work." {
		t.Errorf("r1's home page: %q", got)
	}
	if h.get(r1, "/").testid("owner-removed").Length() != 0 {
		t.Errorf("r1 is told twice")
	}
}
