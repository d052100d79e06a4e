package store

import (
	"context"
	"fmt"
	"time"
)

// ExportedBookmark is one Bookmark as the export writes it (README, "Export"):
// what an import needs to make the Bookmark again, and nothing of the
// Series' reading state, which the next Poll finds afresh.
type ExportedBookmark struct {
	Site     string    `db:"site"`
	SeriesID string    `db:"series_id"`
	URL      string    `db:"url"`
	Title    string    `db:"title"` // "" while no read has found it
	Progress *string   `db:"progress"`
	AddedAt  time.Time `db:"created_at"`
}

// exportBookmarksSQL is one keyset page of a Reader's Bookmarks in key
// order: the bookmarks primary key (reader_id, site, series_id) serves both
// the seek and the order, and the page is cut before its Series are joined,
// so a page costs its size however long the list or the series table
// (TestTheExportPageReadsTheBookmarksKey).
const exportBookmarksSQL = `
SELECT b.site, b.series_id, s.url, s.title, b.progress, b.created_at
  FROM (SELECT site, series_id, progress_num::text AS progress, created_at
          FROM bookmarks
         WHERE reader_id = $1 AND (site, series_id) > ($2, $3)
         ORDER BY site, series_id
         LIMIT $4) b
  JOIN series s USING (site, series_id)
 ORDER BY b.site, b.series_id`

// ExportPage is the page size the export reads with. At 200 the planner
// looks each page's Series up by key; at 500 it hashed the whole series
// table for each page (TestTheExportPageReadsTheBookmarksKey plans this size).
const ExportPage = 200

// ExportBookmarks calls fn with each of the Reader's Bookmarks, in key order,
// reading pageSize at a time so a long list is never held whole: the export
// streams as it reads. A Bookmark added or removed meanwhile may or may not
// appear; none appears twice. fn's error stops the walk and is returned.
func (s *Store) ExportBookmarks(ctx context.Context, readerID string, pageSize int, fn func(ExportedBookmark) error) error {
	site, id := "", ""
	for {
		page, err := getMany[ExportedBookmark](ctx, s, exportBookmarksSQL, readerID, site, id, pageSize)
		if err != nil {
			return fmt.Errorf("store: export bookmarks %s: %w", readerID, err)
		}
		for _, b := range page {
			if err := fn(b); err != nil {
				return err
			}
		}
		if len(page) < pageSize {
			return nil
		}
		last := page[len(page)-1]
		site, id = last.Site, last.SeriesID
	}
}
