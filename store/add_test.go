package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

var addNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func addReader(t *testing.T, s *store.Store, id string) {
	t.Helper()
	if err := s.UpsertReader(context.Background(), store.Reader{DiscordID: id, Name: id}, storetest.Milli(1)); err != nil {
		t.Fatal(err)
	}
}

func novel(id, reader, chapter string) store.AddRequest {
	return store.AddRequest{Site: "novelfull", SeriesID: id, URL: "https://novelfull.com/" + id + ".html", Kind: "novel",
		ReaderID: reader, Chapter: chapter, ChapterURL: map[bool]string{true: "https://novelfull.com/" + id + "/chapter-" + chapter + ".html"}[chapter != ""]}
}

func TestAddingAnAddressCreatesTheSeriesAsksForAPollAndBookmarksIt(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	addReader(t, s, "r")
	addReader(t, s, "q")
	steps := []struct {
		name string
		in   store.AddRequest
		want store.AddResult
	}{
		{"a new Series is created and bookmarked", novel("a", "r", ""), store.AddResult{SeriesCreated: true, BookmarkCreated: true}},
		{"the same address again is already bookmarked", novel("a", "r", ""), store.AddResult{}},
		{"another Reader bookmarks the known Series", novel("a", "q", ""), store.AddResult{BookmarkCreated: true}},
		{"a chapter address sets Progress", novel("a", "r", "7"), store.AddResult{ProgressMoved: true}},
		{"an earlier chapter never lowers it", novel("a", "r", "3"), store.AddResult{}},
		{"a new Series from a chapter address is all three", novel("b", "r", "2"), store.AddResult{SeriesCreated: true, BookmarkCreated: true, ProgressMoved: true}},
		{"the owner's box adds a Series with no Bookmark", novel("c", "", ""), store.AddResult{SeriesCreated: true}},
	}
	for _, st := range steps {
		got, err := s.AddAddress(ctx, st.in, addNow)
		if err != nil || got != st.want {
			t.Fatalf("%s: got %+v, %v; want %+v", st.name, got, err, st.want)
		}
	}
	a, err := s.GetSeries(ctx, "novelfull", "a")
	if err != nil || !a.ForcePollAt.Equal(addNow) || !a.CheckedAt.IsZero() {
		t.Fatalf("a new Series carries a Forced Poll request: %+v, %v", a, err)
	}
	b, err := s.GetBookmark(ctx, "r", "novelfull", "a")
	if err != nil || b.Progress == nil || *b.Progress != "7" {
		t.Fatalf("Progress after the chapter addresses: %+v, %v", b, err)
	}
	if _, err := s.GetBookmark(ctx, "q", "novelfull", "b"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("q has a Bookmark on b they never added: %v", err)
	}
	var orphans int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM series WHERE bookmark_count = 0`).Scan(&orphans); err != nil || orphans != 1 {
		t.Errorf("the owner's Series is the one orphan: %d, %v", orphans, err)
	}
}

func TestAnAddThatFailsLeavesNothingHalfAdded(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	// No such Reader: the Bookmark's foreign key refuses, after the Series
	// insert ran in the same transaction.
	if _, err := s.AddAddress(ctx, novel("a", "nobody", "4"), addNow); err == nil {
		t.Fatal("a Bookmark for an unknown Reader was accepted")
	}
	if _, err := s.GetSeries(ctx, "novelfull", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the Series stayed behind a failed add: %v", err)
	}
}

func TestMyBookmarksPutTheEmberFirstThenTheMostRecentChapter(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	addReader(t, s, "r")
	addReader(t, s, "other")
	for _, id := range []string{"old-new", "recent-new", "caught-up", "no-chapter", "100%_real"} {
		if _, err := s.AddAddress(ctx, novel(id, "r", ""), addNow); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AddAddress(ctx, novel("others", "other", ""), addNow); err != nil {
		t.Fatal(err)
	}
	set := func(id, latest, title string, at int64) {
		t.Helper()
		if _, err := s.Pool().Exec(ctx, `UPDATE series SET latest_chapter_num = $2::numeric, title = $3 WHERE series_id = $1`, id, latest, title); err != nil {
			t.Fatal(err)
		}
		// The trigger stamped the database's clock; pin it so the order is the test's.
		if _, err := s.Pool().Exec(ctx, `UPDATE series SET latest_chapter_at = $2 WHERE series_id = $1`, id, storetest.Milli(at)); err != nil {
			t.Fatal(err)
		}
	}
	set("old-new", "5", "Old New", 100)
	set("recent-new", "9", "Recent New", 300)
	set("caught-up", "4", "Caught Up", 400)
	set("100%_real", "2", "100%_Real", 200)
	if _, err := s.SetProgress(ctx, "r", "novelfull", "caught-up", "4", "", false, storetest.Milli(1)); err != nil {
		t.Fatal(err)
	}
	ids := func(q store.BookmarkQuery) []string {
		t.Helper()
		l, err := s.QueryBookmarks(ctx, "r", q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, b := range l {
			out = append(out, b.SeriesID)
		}
		return out
	}
	check := func(name string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: got %v, want %v", name, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: got %v, want %v", name, got, want)
			}
		}
	}
	check("everything", ids(store.BookmarkQuery{}), "recent-new", "100%_real", "old-new", "caught-up", "no-chapter")
	check("new chapters only", ids(store.BookmarkQuery{NewOnly: true}), "recent-new", "100%_real", "old-new")
	check("a title piece, any case", ids(store.BookmarkQuery{Search: "  nEW "}), "recent-new", "old-new")
	check("LIKE's characters match themselves", ids(store.BookmarkQuery{Search: "0%_"}), "100%_real")
	check("a percent alone is not a wildcard", ids(store.BookmarkQuery{Search: "%"}), "100%_real")
	check("both narrow together", ids(store.BookmarkQuery{NewOnly: true, Search: "caught"}))
	check("the first two", ids(store.BookmarkQuery{Limit: 2}), "recent-new", "100%_real")
	if n, err := s.CountBookmarks(ctx, "r"); err != nil || n != 5 {
		t.Fatalf("count: %d %v, want 5", n, err)
	}
}

func TestLatestChapterRemembersWhenItReachedItsNumber(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	addReader(t, s, "r")
	if _, err := s.AddAddress(ctx, novel("a", "", ""), addNow); err != nil {
		t.Fatal(err)
	}
	at := func() int64 {
		var v int64
		if err := s.Pool().QueryRow(ctx, `SELECT `+storetest.MilliOf("latest_chapter_at")+` FROM series WHERE series_id = 'a'`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if at() != 0 {
		t.Fatal("a Series with no chapter has a chapter time")
	}
	if err := s.ApplyRead(ctx, "novelfull", "a", store.ReadChanges{Latest: true, LatestNum: "3"}); err != nil {
		t.Fatal(err)
	}
	first := at()
	if first == 0 {
		t.Fatal("a Poll's new number left no time")
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE series SET latest_chapter_at = timestamptz 'epoch' + interval '1 millisecond' WHERE series_id = 'a'`); err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyRead(ctx, "novelfull", "a", store.ReadChanges{Latest: true, LatestNum: "3"}); err != nil {
		t.Fatal(err)
	}
	if at() != 1 {
		t.Error("a Poll confirming the same number moved the time")
	}
	if _, err := s.RaiseLatest(ctx, "novelfull", "a", "4", "", "r", storetest.Milli(5)); err != nil {
		t.Fatal(err)
	}
	if at() == 1 {
		t.Error("a Sighting's higher number left the old time")
	}
}

func TestUndoPutsBackTheBookmarkWithItsProgress(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	addReader(t, s, "r")
	if _, err := s.AddAddress(ctx, novel("a", "r", "12.5"), addNow); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveBookmark(ctx, "r", "novelfull", "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.RestoreBookmark(ctx, "r", "novelfull", "a", "12.5", "https://novelfull.com/a/chapter-12.html", addNow); err != nil {
		t.Fatal(err)
	}
	b, err := s.GetBookmark(ctx, "r", "novelfull", "a")
	if err != nil || b.Progress == nil || *b.Progress != "12.5" {
		t.Fatalf("restored %+v, %v", b, err)
	}
	if err := s.RemoveBookmark(ctx, "r", "novelfull", "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSeries(ctx, "novelfull", "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.RestoreBookmark(ctx, "r", "novelfull", "a", "", "", addNow); !errors.Is(err, store.ErrConflict) {
		t.Errorf("restoring onto a deleted Series: %v, want ErrConflict", err)
	}
}

func TestASessionStampsLastSeenAtMostHourly(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	if err := s.NameReader(ctx, "local-ada", "local-ada", "Ada", addNow); err != nil {
		t.Fatal(err)
	}
	seen := func() time.Time {
		r, err := s.GetReader(ctx, "local-ada")
		if err != nil {
			t.Fatal(err)
		}
		return r.LastSeenAt
	}
	if !seen().IsZero() {
		t.Fatal("a named Reader who never signed in was seen")
	}
	for _, st := range []struct {
		at   time.Time
		want time.Time
	}{{addNow, addNow}, {addNow.Add(59 * time.Minute), addNow}, {addNow.Add(61 * time.Minute), addNow.Add(61 * time.Minute)}} {
		if _, err := s.SeenSession(ctx, "local-ada", st.at); err != nil {
			t.Fatal(err)
		}
		if got := seen(); !got.Equal(st.want) {
			t.Errorf("at %v: last seen %v, want %v", st.at, got, st.want)
		}
	}
	if _, err := s.SeenSession(ctx, "nobody", addNow); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown Reader: %v", err)
	}
	l, err := s.ListReaders(ctx)
	if err != nil || len(l) != 1 || l[0].Name != "Ada" {
		t.Errorf("ListReaders = %+v, %v", l, err)
	}
}
