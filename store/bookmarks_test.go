package store_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

func seedBookmarks(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.UpsertReader(ctx, store.Reader{DiscordID: "r"}, storetest.Milli(1)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if err := s.CreateSeries(ctx, store.Series{Site: "novelfull", SeriesID: id, URL: "https://novelfull.com/" + id + ".html", Kind: "novel"}, storetest.Milli(1)); err != nil {
			t.Fatal(err)
		}
		if err := s.AddBookmark(ctx, "r", "novelfull", id, storetest.Milli(1)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE series SET latest_chapter_num = 12.5 WHERE series_id = 'b'`); err != nil {
		t.Fatal(err)
	}
}

func TestProgressNeverMovesBackwardsUnlessAsked(t *testing.T) {
	t.Parallel()
	c := &stmtCounter{}
	s := store.New(storetest.Pool(t, func(cfg *pgxpool.Config) { cfg.ConnConfig.Tracer = c }))
	seedBookmarks(t, s)
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC).UnixMilli()
	steps := []struct {
		num       string
		backwards bool
		want      store.ProgressResult
		stored    string
	}{
		{"10", false, store.ProgressMoved, "10"},
		{"10", false, store.ProgressUnchanged, "10"}, // idempotent
		{"9.5", false, store.ProgressUnchanged, "10"},
		{"12.5", false, store.ProgressMoved, "12.5"},
		{"3", true, store.ProgressMoved, "3"},
	}
	for _, st := range steps {
		before := c.n.Load()
		got, err := s.SetProgress(ctx, "r", "novelfull", "a", st.num, "", st.backwards, storetest.Milli(now))
		if err != nil || got != st.want {
			t.Fatalf("SetProgress(%s, backwards=%v) = %v, %v; want %v", st.num, st.backwards, got, err, st.want)
		}
		if n := c.n.Load() - before; n != 1 {
			t.Errorf("SetProgress(%s) took %d statements, want 1", st.num, n)
		}
		bs, _ := s.ListBookmarks(ctx, "r")
		for _, b := range bs {
			if b.SeriesID == "a" && (b.Progress == nil || *b.Progress != st.stored) {
				t.Fatalf("after %s: progress %v, want %s", st.num, b.Progress, st.stored)
			}
		}
	}
	if _, err := s.SetProgress(ctx, "r", "novelfull", "nope", "1", "", false, storetest.Milli(now)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no bookmark: %v", err)
	}
}

func TestBookmarksWithANewChapterComeFirst(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	seedBookmarks(t, s)
	ctx := context.Background()
	bs, err := s.ListBookmarks(ctx, "r")
	if err != nil || len(bs) != 2 {
		t.Fatalf("%v %v", bs, err)
	}
	if bs[0].SeriesID != "b" || !bs[0].New || bs[1].New {
		t.Fatalf("order/ember wrong: %+v", bs)
	}
	if _, err := s.SetProgress(ctx, "r", "novelfull", "b", "12.5", "", false, storetest.Milli(3)); err != nil {
		t.Fatal(err)
	}
	bs, _ = s.ListBookmarks(ctx, "r")
	for _, b := range bs {
		if b.New {
			t.Fatalf("caught up but still new: %+v", b)
		}
	}
}

func TestATokenFindsItsReaderUntilRevoked(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	seedBookmarks(t, s)
	ctx := context.Background()
	id, err := s.CreateToken(ctx, "r", []byte("hash"), "phone", storetest.Milli(1))
	if err != nil {
		t.Fatal(err)
	}
	const at = int64(1_780_000_000_000) // a real clock: the stamp is hourly
	if who, err := s.ReaderByToken(ctx, []byte("hash"), storetest.Milli(at)); err != nil || who.ReaderID != "r" || who.ID != id || who.Label != "phone" {
		t.Fatalf("%+v %v", who, err)
	}
	// Uses within the hour find the Reader without writing the row again.
	version := func() (v string, used int64) {
		t.Helper()
		if err := s.Pool().QueryRow(ctx, `SELECT xmin::text, `+storetest.MilliOf("last_used_at")+` FROM reader_tokens WHERE id = $1`, id).Scan(&v, &used); err != nil {
			t.Fatal(err)
		}
		return v, used
	}
	v, used := version()
	if used != at {
		t.Fatalf("first use stamped %d, want %d", used, at)
	}
	if who, err := s.ReaderByToken(ctx, []byte("hash"), storetest.Milli(at+1000)); err != nil || who.ReaderID != "r" {
		t.Fatalf("%+v %v", who, err)
	}
	if v2, used2 := version(); v2 != v || used2 != at {
		t.Fatalf("a use within the hour rewrote the row (stamp %d)", used2)
	}
	if _, err := s.ReaderByToken(ctx, []byte("hash"), storetest.Milli(at+3600001)); err != nil {
		t.Fatal(err)
	}
	if _, used3 := version(); used3 != at+3600001 {
		t.Fatalf("a use after the hour stamped %d", used3)
	}
	if err := s.RevokeToken(ctx, "someone-else", id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another reader revoked it: %v", err)
	}
	if err := s.RevokeToken(ctx, "r", id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReaderByToken(ctx, []byte("hash"), storetest.Milli(at+3600002)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoked token still works: %v", err)
	}
}

func TestASeriesIsAnOrphanExactlyWhileNoBookmarkHoldsIt(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	seedBookmarks(t, s)
	ctx := context.Background()
	orphans := func() []string {
		t.Helper()
		page, err := s.ListAdminSeries(ctx, store.SeriesQuery{Filter: store.FilterOrphan}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range page.Rows {
			ids = append(ids, r.SeriesID)
		}
		return ids
	}
	if got := orphans(); len(got) != 0 {
		t.Fatalf("bookmarked series listed as orphans: %v", got)
	}
	if err := s.UpsertReader(ctx, store.Reader{DiscordID: "r2"}, storetest.Milli(1)); err != nil {
		t.Fatal(err)
	}
	if err := s.AddBookmark(ctx, "r2", "novelfull", "a", storetest.Milli(2)); err != nil {
		t.Fatal(err)
	}
	if err := s.AddBookmark(ctx, "r2", "novelfull", "a", storetest.Milli(3)); err != nil { // idempotent: counted once
		t.Fatal(err)
	}
	if err := s.RemoveBookmark(ctx, "r", "novelfull", "a"); err != nil {
		t.Fatal(err)
	}
	if got := orphans(); len(got) != 0 {
		t.Fatalf("a still-bookmarked series listed as orphan: %v", got)
	}
	if err := s.RemoveBookmark(ctx, "r2", "novelfull", "a"); err != nil {
		t.Fatal(err)
	}
	if got := orphans(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("orphans %v, want [a]", got)
	}
	if err := s.DeleteSeries(ctx, "novelfull", "a"); err != nil {
		t.Fatalf("deleting the orphan: %v", err)
	}
}

func TestAFigureStopsCountingPastItsCap(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	var series []storetest.Series
	for i := 1; i <= store.FigureCap+5; i++ {
		id := "n" + strconv.Itoa(i)
		series = append(series, storetest.Series{Site: word.Novelfull, ID: id, URL: "https://novelfull.com/" + id + ".html", Kind: word.Novel})
	}
	storetest.Insert(t, s.Pool(), series...)
	stats, err := s.AdminStats(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if stats[store.FilterAll] != store.FigureCap+1 || stats[store.FilterOrphan] != store.FigureCap+1 {
		t.Fatalf("every Series %d, orphan %d: want the cap+1 (%d) meaning more", stats[store.FilterAll], stats[store.FilterOrphan], store.FigureCap+1)
	}
	if stats[store.FilterFinished] != 0 {
		t.Fatalf("finished %d", stats[store.FilterFinished])
	}
}
