package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// seedExport makes n Series over the six Sites; r1 bookmarks every
// every-th of them and r2 every one, so a page that leaked across Readers
// would show, and the series table is larger than one Reader's list, as on
// a server.
func seedExport(t *testing.T, s *store.Store, n, every int) {
	t.Helper()
	pool := s.Pool()
	storetest.Ensure(t, pool, storetest.Reader{ID: "r1", Name: "One"}, storetest.Reader{ID: "r2", Name: "Two"})
	var series []storetest.Series
	var marks []storetest.Bookmark
	for i := range n {
		site := word.Sites[i%6]
		id := fmt.Sprintf("x%05d", i)
		series = append(series, storetest.Series{Site: site, ID: id, URL: "https://example.test/" + id, Title: "T " + id, Kind: site.Kind()})
		for _, r := range []string{"r1", "r2"} {
			if r == "r1" && i%every != 0 {
				continue
			}
			marks = append(marks, storetest.Bookmark{Reader: r, Site: site, Series: id, CreatedAt: storetest.Milli(int64(i + 1)), UpdatedAt: storetest.Milli(1)})
		}
	}
	storetest.Insert(t, pool, series...)
	storetest.Insert(t, pool, marks...)
}

func TestTheExportWalksEveryBookmarkOfItsReaderOnceAcrossPages(t *testing.T) {
	t.Parallel()
	s := store.New(storetest.Pool(t, nil))
	seedExport(t, s, 7, 1)
	for _, size := range []int{1, 2, 7, 50} {
		seen := map[string]int{}
		err := s.ExportBookmarks(context.Background(), "r1", size, func(b store.ExportedBookmark) error {
			seen[b.Site+"/"+b.SeriesID]++
			if b.Title != "T "+b.SeriesID || b.URL != "https://example.test/"+b.SeriesID || b.AddedAt.IsZero() {
				t.Errorf("page size %d: row %+v", size, b)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != 7 {
			t.Errorf("page size %d: %d Bookmarks, want 7: %v", size, len(seen), seen)
		}
		for k, c := range seen {
			if c != 1 {
				t.Errorf("page size %d: %s seen %d times", size, k, c)
			}
		}
	}
}

// TestTheExportPageReadsTheBookmarksKey: a deep keyset page of one Reader's
// long list (3 000 of 30 000 Series) is an index scan of the bookmarks
// primary key that touches about its page and its Series, with no scan of
// either table. A sort of the page itself is allowed: it is bounded.
func TestTheExportPageReadsTheBookmarksKey(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 30 000 Series")
	}
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	seedExport(t, s, 30_000, 10)
	for _, q := range []string{"VACUUM ANALYZE bookmarks", "ANALYZE series"} {
		if _, err := pool.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	for _, after := range [][2]string{{"", ""}, {string(word.Sites[3]), "x15000"}} {
		plan, raw := analyze(t, pool, store.ExportBookmarksStatement("r1", after[0], after[1], store.ExportPage))
		touched, bad := plan.walk()
		bad = slices.DeleteFunc(bad, func(n string) bool { return strings.HasPrefix(n, "Sort") })
		if len(bad) > 0 || touched > 3*float64(store.ExportPage) || !usesIndex(plan, "bookmarks_pkey") {
			t.Errorf("after %v: touched %.0f rows, bad nodes %v\n%s", after, touched, bad, raw)
		}
	}
}

func usesIndex(p planNode, name string) bool {
	if p.Index == name {
		return true
	}
	for _, c := range p.Plans {
		if usesIndex(c, name) {
			return true
		}
	}
	return false
}
