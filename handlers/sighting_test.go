package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// myRow is one Reader's Bookmark on a Series as GET /api/v1/bookmarks
// answers it: the ember ("new") and the Latest Chapter that Reader sees.
func (h *harness) myRow(token, id string) map[string]any {
	h.t.Helper()
	a := h.api("GET", "/api/v1/bookmarks", token, "")
	list, _ := a.json["bookmarks"].([]any)
	for _, v := range list {
		if b, _ := v.(map[string]any); b["series_id"] == id {
			return b
		}
	}
	h.t.Fatalf("no Bookmark on %s in %d %s", id, a.status, a.raw)
	return nil
}

// neverRead says whether the owner's never-read filter lists the Series.
func (h *harness) neverRead(id string) bool {
	h.t.Helper()
	return h.get(h.owner(), "/admin/series?filter=never-checked").find(`[data-series-id="`+id+`"]`).Length() == 1
}

// A Sighting on a Series whose page no Poll has read counts for the Reader
// who made it only (ADR 0021): another Reader's ember stays dark and the
// owner's never-read filter keeps the Series, until a second Reader's
// Sighting agrees within the bound; a Poll read then bounds as before.
func TestASightingOnAPageNoPollReadCountsForItsReaderOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const id = "coming-soon-title"
	// Checked by Polls that could not reach the Site: no chapter, no failure row.
	h.seed([]fixture{{id: id, url: addr, checkedAgo: time.Minute, bookmarked: true}})
	tok := map[string]string{}
	for _, r := range []string{"ada", "ben", "cid"} {
		tok[r] = h.apiToken(r, "")
		storetest.Insert(t, h.pool, storetest.Bookmark{Reader: r, Site: word.Asurascans, Series: id, Progress: "2"})
	}
	others := h.apiToken("r1", "")
	sight := func(who string, n int) apiAnswer {
		return h.api("POST", "/api/v1/sightings", tok[who], fmt.Sprintf(`{"url":"https://asurascans.com/comics/%s","chapters":[%d]}`, id, n))
	}
	dark := func(when, token string) {
		t.Helper()
		if b := h.myRow(token, id); b["new"] != false || b["latest_chapter"] != nil {
			t.Fatalf("%s: another Reader's row %v", when, b)
		}
	}

	a := sight("ada", 9999999)
	if a.status != 200 || a.json["known"] != true || a.json["raised"] != false || a.json["only_yours"] != true || a.json["latest_chapter"] != nil {
		t.Fatalf("Ada's Sighting on a page no Poll read: %d %s", a.status, a.raw)
	}
	dark("after Ada's Sighting", tok["ben"])
	if b := h.myRow(tok["ada"], id); b["new"] != true || b["latest_chapter"] != 9999999.0 {
		t.Fatalf("Ada's own row does not count her Sighting: %v", b)
	}
	if row := h.get(h.client("ada"), "/").find(`[data-series-id="` + id + `"] [data-testid="unconfirmed"]`).Text(); row != "seen by you; no Poll has read the Site's page yet" {
		t.Errorf("Ada's own row reads %q", row)
	}
	if !h.neverRead(id) {
		t.Fatal("one Reader's Sighting took the Series out of never read")
	}

	// Ben's 500 is nowhere near Ada's number: still one Reader's word each.
	if a := sight("ben", 500); a.status != 200 || a.json["raised"] != false {
		t.Fatalf("Ben's Sighting: %d %s", a.status, a.raw)
	}
	dark("after two Sightings that disagree", others)
	// Cid's 520 is within the bound of Ben's 500: both stand behind 500.
	if a := sight("cid", 520); a.status != 200 || a.json["raised"] != true || a.json["latest_chapter"] != 500.0 {
		t.Fatalf("Cid's agreeing Sighting: %d %s", a.status, a.raw)
	}
	if b := h.myRow(others, id); b["new"] != true || b["latest_chapter"] != 500.0 {
		t.Fatalf("after two Readers agree, another Reader's row %v", b)
	}
	s, err := h.store.GetSeries(context.Background(), "asurascans", id)
	if err != nil || s.LatestChapter == nil || *s.LatestChapter != "500" || s.LatestRaisedBy == nil || *s.LatestRaisedBy != "ben" {
		t.Fatalf("the Series after the agreement: %+v %v", s, err)
	}
	if !h.neverRead(id) {
		t.Fatal("two Readers' Sightings took the Series out of never read; no Poll reached its page")
	}

	// A Poll reaches the page and reads 10: the bound is 60 from now on,
	// and Ada's number no longer counts even for her.
	if err := h.store.ApplyRead(context.Background(), "asurascans", id, store.ReadChanges{Seen: true, SeenNum: "10"}); err != nil {
		t.Fatal(err)
	}
	if h.neverRead(id) {
		t.Fatal("never read still lists a Series a Poll read")
	}
	if b := h.myRow(tok["ada"], id); b["latest_chapter"] != 500.0 {
		t.Fatalf("after a Poll read, Ada's row %v", b)
	}
	if a := sight("ada", 9999999); a.status != http.StatusUnprocessableEntity || a.word() != "implausible" || !strings.Contains(a.raw, "at most 60") {
		t.Fatalf("after a Poll read 10: %d %s", a.status, a.raw)
	}
}

// Once a Poll has read a number, a Sighting within the bound raises Latest
// Chapter for every Reader at once, as before.
func TestASightingAfterAPollReadRaisesForEveryReader(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const id = "second-title"
	h.seed([]fixture{{id: id, url: addr, checkedAgo: time.Minute, bookmarked: true}})
	ada := h.apiToken("ada", "")
	storetest.Insert(t, h.pool, storetest.Bookmark{Reader: "ada", Site: word.Asurascans, Series: id, Progress: "2"})
	ben := h.apiToken("r1", "")
	sight := func(n int) apiAnswer {
		return h.api("POST", "/api/v1/sightings", ada, fmt.Sprintf(`{"url":"https://asurascans.com/comics/%s","chapters":[%d]}`, id, n))
	}
	if a := sight(9999999); a.status != 200 || a.json["raised"] != false {
		t.Fatalf("before any read: %d %s", a.status, a.raw)
	}
	if err := h.store.ApplyRead(context.Background(), "asurascans", id, store.ReadChanges{Latest: true, LatestNum: "10"}); err != nil {
		t.Fatal(err)
	}
	if b := h.myRow(ada, id); b["latest_chapter"] != 10.0 {
		t.Fatalf("after a Poll read 10, Ada's unbounded number still counts for her: %v", b)
	}
	if a := sight(61); a.status != http.StatusUnprocessableEntity || !strings.Contains(a.raw, "at most 60") {
		t.Fatalf("above the bound: %d %s", a.status, a.raw)
	}
	if a := sight(60); a.status != 200 || a.json["raised"] != true || a.json["only_yours"] != false || a.json["latest_chapter"] != 60.0 {
		t.Fatalf("at the bound: %d %s", a.status, a.raw)
	}
	if b := h.myRow(ben, id); b["new"] != true || b["latest_chapter"] != 60.0 {
		t.Fatalf("another Reader's row after a bounded Sighting: %v", b)
	}
}
