package store_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

func TestAReaderWithoutSettingsHasEveryChannelOffAndSavedOnesPersist(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	ctx := context.Background()
	storetest.Insert(t, pool, storetest.Reader{ID: "r1", Name: "One"})
	got, err := s.ReaderSettings(ctx, "r1")
	if err != nil || got != store.DefaultReaderSettings || got.Saved {
		t.Fatalf("unsaved settings: %+v, %v", got, err)
	}
	want := store.ReaderSettings{Discord: true, Feed: true, Digest: true, DigestHour: 21, Zone: "Asia/Tokyo"}
	if err := s.SaveReaderSettings(ctx, "r1", want, storetest.Milli(5)); err != nil {
		t.Fatal(err)
	}
	want.Saved = true
	if got, err = s.ReaderSettings(ctx, "r1"); err != nil || got != want {
		t.Fatalf("read back %+v, %v; want %+v", got, err, want)
	}
}

func TestAFeedSecretFindsItsReaderUntilRevokedOrTheFeedIsOff(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	ctx := context.Background()
	storetest.Insert(t, pool, storetest.Reader{ID: "r1", Name: "One"})
	first, second := []byte("first-hash"), []byte("second-hash")
	if err := s.SetFeedSecret(ctx, "r1", first, storetest.Milli(1)); err != nil {
		t.Fatal(err)
	}
	if id, err := s.ReaderByFeedSecret(ctx, first); err != nil || id != "r1" {
		t.Fatalf("a made secret: %q, %v", id, err)
	}
	if v, _ := s.ReaderSettings(ctx, "r1"); !v.Feed || !v.HasFeedSecret {
		t.Fatalf("making an address did not turn the feed on: %+v", v)
	}
	if err := s.SetFeedSecret(ctx, "r1", second, storetest.Milli(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReaderByFeedSecret(ctx, first); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a replaced secret still works: %v", err)
	}
	// Saving with the feed on keeps the address; saving it off forgets it.
	if err := s.SaveReaderSettings(ctx, "r1", store.ReaderSettings{Feed: true, DigestHour: 8, Zone: "UTC"}, storetest.Milli(3)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReaderByFeedSecret(ctx, second); err != nil {
		t.Errorf("saving with the feed on lost its address: %v", err)
	}
	if err := s.SaveReaderSettings(ctx, "r1", store.ReaderSettings{DigestHour: 8, Zone: "UTC"}, storetest.Milli(4)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReaderByFeedSecret(ctx, second); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the feed turned off still answers: %v", err)
	}
	if v, _ := s.ReaderSettings(ctx, "r1"); v.HasFeedSecret {
		t.Error("turning the feed off kept its address")
	}
	if err := s.SetFeedSecret(ctx, "r1", first, storetest.Milli(5)); err != nil {
		t.Fatal(err)
	}
	if err := s.SetFeedSecret(ctx, "r1", nil, storetest.Milli(6)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReaderByFeedSecret(ctx, first); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a revoked secret still works: %v", err)
	}
}

func TestTheFeedHoldsArrivalsAboveProgressOnUnfinishedBookmarksNewestFirst(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	at := func(m int) time.Time { return storetest.Milli(int64(m) * 60_000) }
	storetest.Insert(t, pool, storetest.Reader{ID: "r1", Name: "One"}, storetest.Reader{ID: "r2", Name: "Two"})
	storetest.Insert(t, pool,
		storetest.Series{Site: word.Asurascans, ID: "read", URL: "https://asuracomic.net/series/read", Title: "Read", LatestChapter: "12"},
		storetest.Series{Site: word.Asurascans, ID: "done", URL: "https://asuracomic.net/series/done", Title: "Done", LatestChapter: "9", FinishedAt: at(50)},
		storetest.Series{Site: word.Asurascans, ID: "other", URL: "https://asuracomic.net/series/other", Title: "Other", LatestChapter: "3"})
	storetest.Insert(t, pool,
		storetest.Bookmark{Reader: "r1", Site: word.Asurascans, Series: "read", Progress: "10"},
		storetest.Bookmark{Reader: "r1", Site: word.Asurascans, Series: "done"},
		storetest.Bookmark{Reader: "r2", Site: word.Asurascans, Series: "other"})
	storetest.Insert(t, pool,
		storetest.Arrival{Site: word.Asurascans, Series: "read", Chapter: "10", ConfirmedAt: at(1)},
		storetest.Arrival{Site: word.Asurascans, Series: "read", Chapter: "11", ConfirmedAt: at(2), URL: "https://asuracomic.net/series/read/chapter/11"},
		storetest.Arrival{Site: word.Asurascans, Series: "read", Chapter: "12", ConfirmedAt: at(3)},
		storetest.Arrival{Site: word.Asurascans, Series: "done", Chapter: "9", ConfirmedAt: at(4)},
		storetest.Arrival{Site: word.Asurascans, Series: "other", Chapter: "3", ConfirmedAt: at(5)})
	got, err := s.FeedEntries(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	var chapters []string
	for _, e := range got {
		chapters = append(chapters, e.SeriesID+":"+e.Chapter)
	}
	if fmt.Sprint(chapters) != "[read:12 read:11]" {
		t.Fatalf("entries %v; want read:12 then read:11 (10 is read, done is Finished, other is not mine)", chapters)
	}
	if got[1].ChapterURL != "https://asuracomic.net/series/read/chapter/11" || got[0].LatestChapter != "12" || !got[0].ConfirmedAt.Equal(at(3)) {
		t.Errorf("entry facts: %+v", got)
	}
}

// TestTheFeedReadsOnlyTheReadersBookmarksArrivals plans the feed's one
// statement for a Reader with 300 Bookmarks among 3000 Series, 12 000
// other Bookmarks of 40 other Readers, and 15 000 Arrivals: it starts from the Reader's Bookmarks, reads each one's
// Arrivals through its index, and never scans a table.
func TestTheFeedReadsOnlyTheReadersBookmarksArrivals(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 15 000 Arrivals")
	}
	t.Parallel()
	pool := storetest.Pool(t, nil)
	readers := []storetest.Reader{{ID: "r1", Name: "One"}}
	for i := range 40 {
		readers = append(readers, storetest.Reader{ID: "o" + strconv.Itoa(i), Name: "Other"})
	}
	storetest.Insert(t, pool, readers...)
	var series []storetest.Series
	var marks []storetest.Bookmark
	var arrivals []storetest.Arrival
	for i := range 3000 {
		id := "s" + strconv.Itoa(i)
		series = append(series, storetest.Series{Site: word.Sites[i%6], ID: id, URL: "https://example.test/" + id, LatestChapter: "5"})
		if i%10 == 0 {
			marks = append(marks, storetest.Bookmark{Reader: "r1", Site: word.Sites[i%6], Series: id, Progress: "1"})
		}
		for k := range 4 { // the other Readers' Bookmarks: 12 000 in all
			marks = append(marks, storetest.Bookmark{Reader: "o" + strconv.Itoa((i+k*7)%40), Site: word.Sites[i%6], Series: id, Progress: "1"})
		}
		for c := 1; c <= 5; c++ {
			arrivals = append(arrivals, storetest.Arrival{Site: word.Sites[i%6], Series: id, Chapter: strconv.Itoa(c), ConfirmedAt: storetest.Milli(int64(i*10 + c))})
		}
	}
	storetest.Insert(t, pool, series...)
	storetest.Insert(t, pool, marks...)
	storetest.Insert(t, pool, arrivals...)
	if _, err := pool.Exec(context.Background(), "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	plan, raw := analyze(t, pool, store.Queued{SQL: store.FeedEntriesSQL, Args: []any{"r1", store.FeedLimit}})
	touched, bad := plan.walk()
	var unbounded []string
	for _, b := range bad {
		// The per-Series and the final top-N sorts read bounded sets; a
		// bitmap over bookmarks_pkey reads exactly the Reader's Bookmarks.
		if !strings.HasPrefix(b, "Sort") && b != "Bitmap Heap Scan bookmarks" {
			unbounded = append(unbounded, b)
		}
	}
	// 300 Bookmarks (index and heap), their 300 Series, their 1500 Arrivals.
	if len(unbounded) > 0 || touched > 3000 {
		t.Errorf("the feed touches %.0f rows, unbounded nodes %v:\n%s", touched, unbounded, raw)
	}
}
