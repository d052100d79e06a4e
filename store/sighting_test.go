package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// A Sighting on a Series no Poll has read a number for counts for the
// Reader who made it only (CONTEXT.md, Sighting; ADR 0021): another
// Reader's ember stays dark, the Series stays never read, until a second
// Reader agrees within the bound; a Poll read then bounds as before.
func TestAnUnreadPagesSightingCountsForItsReaderOnly(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	at := storetest.Milli(5)
	for _, id := range []string{"ada", "ben", "cid", "dee"} {
		if err := s.UpsertReader(ctx, store.Reader{DiscordID: id, Name: id}, storetest.Milli(1)); err != nil {
			t.Fatal(err)
		}
	}
	// Checked by a Poll that could not reach the Site: no number, no failure row.
	pollSeries(t, s, "novelfull", "a", "checked_at = $3", storetest.Milli(2))
	for _, id := range []string{"ada", "ben", "cid", "dee"} {
		if err := s.AddBookmark(ctx, id, "novelfull", "a", at); err != nil {
			t.Fatal(err)
		}
	}
	view := func(reader string) store.Bookmark {
		t.Helper()
		b, err := s.GetBookmark(ctx, reader, "novelfull", "a")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	latest := func(b store.Bookmark) string {
		if b.LatestChapter == nil {
			return ""
		}
		return *b.LatestChapter
	}
	neverRead := func() bool {
		t.Helper()
		p, err := s.ListAdminSeries(ctx, store.SeriesQuery{Filter: store.FilterNeverChecked}, at)
		if err != nil {
			t.Fatal(err)
		}
		return len(p.Rows) == 1
	}
	sight := func(reader, num string) bool {
		t.Helper()
		raised, err := s.RaiseLatest(ctx, "novelfull", "a", num, "", reader, at)
		if err != nil {
			t.Fatalf("%s sights %s: %v", reader, num, err)
		}
		return raised
	}

	if sight("ada", "9999999") {
		t.Fatal("Ada's Sighting on a page no Poll read raised Latest Chapter for every Reader")
	}
	if b := view("ben"); b.New || b.LatestChapter != nil {
		t.Fatalf("Ada's unbounded Sighting reached Ben's row: latest %s, ember %v", latest(b), b.New)
	}
	if b := view("ada"); !b.New || latest(b) != "9999999" || b.RaisedBy != "ada" {
		t.Fatalf("Ada's own row: %+v", b)
	}
	if !neverRead() {
		t.Fatal("one Reader's Sighting took the Series out of never read")
	}
	if sight("ben", "500") {
		t.Fatal("Ben's 500 is not within the bound of Ada's number, yet it raised Latest Chapter")
	}
	if b := view("dee"); b.New {
		t.Fatalf("two Sightings that disagree lit Dee's ember at %s", latest(b))
	}
	// Cid's 549.5 is within 50 of Ben's 500: both stand behind 500.
	if !sight("cid", "549.5") {
		t.Fatal("Cid's Sighting agrees with Ben's within the bound, yet raised nothing")
	}
	if b := view("dee"); !b.New || latest(b) != "500" || b.RaisedBy != "ben" {
		t.Fatalf("after two Readers agree, Dee's row: %+v", b)
	}
	if b := view("cid"); latest(b) != "549.5" || b.RaisedBy != "cid" {
		t.Fatalf("Cid's own higher number no longer counts for him: %+v", b)
	}
	if !neverRead() {
		t.Fatal("two Readers' Sightings took the Series out of never read; no Poll reached its page")
	}

	// A Poll reads 10 below the agreed 500: the page has a number now, so
	// the own Sightings stop counting and the bound is 60.
	if err := s.ApplyRead(ctx, "novelfull", "a", store.ReadChanges{Seen: true, SeenNum: "10"}); err != nil {
		t.Fatal(err)
	}
	if neverRead() {
		t.Fatal("never read still lists a Series a Poll read")
	}
	if b := view("ada"); latest(b) != "500" {
		t.Fatalf("after a Poll read, Ada's row: %+v", b)
	}
	var imp *store.ImplausibleError
	if _, err := s.RaiseLatest(ctx, "novelfull", "a", "9999999", "", "ada", at); !errors.As(err, &imp) || imp.Bound != "60" {
		t.Fatalf("after a Poll read 10: %v", err)
	}
	var own int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM own_sightings`).Scan(&own); err != nil || own != 0 {
		t.Fatalf("%d own Sightings outlive the first Poll read (%v)", own, err)
	}
}

// Once a Poll read a number, a Sighting within the bound raises Latest
// Chapter for every Reader, and the Poll's first read is bounded by nothing
// the lone Sighting claimed.
func TestAfterAPollReadASightingRaisesForEveryReader(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	at := storetest.Milli(5)
	for _, id := range []string{"ada", "ben"} {
		if err := s.UpsertReader(ctx, store.Reader{DiscordID: id, Name: id}, storetest.Milli(1)); err != nil {
			t.Fatal(err)
		}
	}
	pollSeries(t, s, "novelfull", "a", "")
	if err := s.AddBookmark(ctx, "ben", "novelfull", "a", at); err != nil {
		t.Fatal(err)
	}
	if raised, err := s.RaiseLatest(ctx, "novelfull", "a", "9999999", "", "ada", at); err != nil || raised {
		t.Fatalf("before any read: %v %v", raised, err)
	}
	if err := s.ApplyRead(ctx, "novelfull", "a", store.ReadChanges{Latest: true, LatestNum: "10"}); err != nil {
		t.Fatal(err)
	}
	if raised, err := s.RaiseLatest(ctx, "novelfull", "a", "60", "", "ada", at); err != nil || !raised {
		t.Fatalf("a Sighting at the bound: %v %v", raised, err)
	}
	b, err := s.GetBookmark(ctx, "ben", "novelfull", "a")
	if err != nil || !b.New || b.LatestChapter == nil || *b.LatestChapter != "60" || b.RaisedBy != "ada" {
		t.Fatalf("Ben's row after Ada's bounded Sighting: %+v %v", b, err)
	}
}
