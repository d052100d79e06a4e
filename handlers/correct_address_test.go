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

// Issue 24, item 2: the owner corrects a Series' address. The same Series'
// address is changed in place and its failure row stays until a read
// succeeds; another Site's address is refused and changes nothing.
func TestTheOwnerCorrectsASeriesAddressInPlaceAndTheFailureRowStays(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	base := "/admin/series/asurascans/gate-refused"
	if h.get(c, base).testid("address-control").Length() != 1 {
		t.Errorf("the detail page has no address control")
	}
	before := h.snapshot()
	a := h.post(c, base+"/address", url.Values{"url": {"https://novelfull.com/x.html"}}, "HX-Request", "true")
	if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.doc.Text(), "not the address of a Series on asurascans") {
		t.Errorf("another Site's address: %d %q", a.status, a.doc.Text())
	}
	if h.snapshot() != before {
		t.Fatalf("a refused correction changed rows")
	}
	a = h.post(c, base+"/address", url.Values{"url": {" https://asurascans.com/comics/gate-refused-7f873ca6 "}})
	if a.status != http.StatusSeeOther {
		t.Fatalf("correction: %d", a.status)
	}
	var got, outcome string
	err := h.pool.QueryRow(context.Background(), `SELECT s.url, f.outcome FROM series s JOIN poll_failures f USING (site, series_id)
		WHERE s.site = 'asurascans' AND s.series_id = 'gate-refused'`).Scan(&got, &outcome)
	if err != nil {
		t.Fatalf("the Series or its failure row is gone: %v", err)
	}
	if got != "https://asurascans.com/comics/gate-refused" || outcome != "unfetchable" {
		t.Errorf("after correction: url %q, failure %q", got, outcome)
	}
}

// Issue 24, item 2: an address of another known Series merges the two:
// Bookmarks move, the higher Progress (as a number) wins, the old Series goes.
func TestCorrectingToAnotherSeriesAddressMergesTheBookmarks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	for _, r := range []string{"r2", "r3", "r4"} {
		storetest.Ensure(t, h.pool, storetest.Reader{ID: r, Name: "Reader " + r})
	}
	for _, b := range []storetest.Bookmark{
		{Reader: "r2", Site: word.Asurascans, Series: "healthy", Progress: "9", UpdatedAt: t0},
		{Reader: "r2", Site: word.Asurascans, Series: "stale", Progress: "12", UpdatedAt: t0},
		{Reader: "r3", Site: word.Asurascans, Series: "stale", Progress: "3", UpdatedAt: t0},
		{Reader: "r4", Site: word.Asurascans, Series: "healthy", Progress: "20", UpdatedAt: t0},
		{Reader: "r4", Site: word.Asurascans, Series: "stale", Progress: "4", UpdatedAt: t0},
	} {
		storetest.Insert(t, h.pool, b)
	}
	c := h.owner()
	a := h.post(c, "/admin/series/asurascans/stale/address", url.Values{"url": {"https://asurascans.com/comics/healthy"}})
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/admin/series/asurascans/healthy" {
		t.Fatalf("merge: %d to %q", a.status, a.header.Get("Location"))
	}
	if h.get(c, "/admin/series/asurascans/stale").status != http.StatusNotFound {
		t.Errorf("the old Series survived the merge")
	}
	rows, err := h.pool.Query(context.Background(), `SELECT reader_id || '=' || progress_num::text FROM bookmarks
		WHERE site = 'asurascans' AND series_id IN ('healthy', 'stale') ORDER BY series_id, reader_id`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// healthy's rows only: r1 kept 2, r2 took 12 over 9, r3 moved, r4 kept 20 over 4.
	if want := "r1=2 r2=12 r3=3 r4=20"; strings.Join(got, " ") != want {
		t.Errorf("Bookmarks after merge: %q, want %q", strings.Join(got, " "), want)
	}
}

// Issue 24, item 2: an address of a Series not yet known makes that Series,
// which takes the Bookmarks; the old id goes.
func TestCorrectingToANewSeriesAddressMovesTheSeries(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	a := h.post(c, "/admin/series/asurascans/never/address", url.Values{"url": {"https://asurascans.com/comics/brand-new"}}, "HX-Request", "true")
	if a.status != http.StatusOK || a.header.Get("HX-Redirect") != "/admin/series/asurascans/brand-new" {
		t.Fatalf("move: %d, redirect %q", a.status, a.header.Get("HX-Redirect"))
	}
	var n int
	err := h.pool.QueryRow(context.Background(), `SELECT count(*) FROM bookmarks b JOIN series s USING (site, series_id)
		WHERE b.site = 'asurascans' AND b.series_id = 'brand-new' AND s.url = 'https://asurascans.com/comics/brand-new'`).Scan(&n)
	if err != nil || n != 1 {
		t.Errorf("the new Series holds %d Bookmarks (%v), want 1", n, err)
	}
	if h.get(c, "/admin/series/asurascans/never").status != http.StatusNotFound {
		t.Errorf("the old Series survived")
	}
}
