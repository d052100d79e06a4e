package store

import (
	"context"
	"fmt"
	"time"
)

const addBookmarkSQL = `
INSERT INTO bookmarks (reader_id, site, series_id, created_at, updated_at)
VALUES ($1, $2, $3, $4, $4)
ON CONFLICT (reader_id, site, series_id) DO NOTHING`

// AddBookmark records that a Reader follows a Series (idempotent).
func (s *Store) AddBookmark(ctx context.Context, readerID, site, seriesID string, now time.Time) error {
	if _, err := s.pool.Exec(ctx, addBookmarkSQL, readerID, site, seriesID, ms(now)); err != nil {
		return fmt.Errorf("store: add bookmark %s %s/%s: %w", readerID, site, seriesID, translate(err))
	}
	return nil
}

// Bookmark is one row of a Reader's list: the Series' facts and their Progress.
type Bookmark struct {
	Site          string    `db:"site"`
	SeriesID      string    `db:"series_id"`
	URL           string    `db:"url"`
	Title         string    `db:"title"`
	CoverURL      string    `db:"cover_url"`
	Kind          string    `db:"kind"`
	LatestChapter *string   `db:"latest_chapter"`
	LatestURL     string    `db:"latest_chapter_url"`
	Progress      *string   `db:"progress"`
	ProgressURL   string    `db:"progress_url"`
	New           bool      `db:"new"` // the ember: a chapter past this Reader's Progress
	UpdatedAt     time.Time `db:"updated_at"`
}

// listBookmarksSQL: the Reader's Bookmarks, new chapters first, then most
// recently touched. Served by the bookmarks primary key (reader_id prefix).
const listBookmarksSQL = `
SELECT b.site, b.series_id, s.url, s.title, s.cover_url, s.kind,
       s.latest_chapter_num::text AS latest_chapter, s.latest_chapter_url,
       b.progress_num::text AS progress, b.progress_url,
       (s.latest_chapter_num IS NOT NULL AND (b.progress_num IS NULL OR s.latest_chapter_num > b.progress_num)) AS new,
       b.updated_at
  FROM bookmarks b JOIN series s USING (site, series_id)
 WHERE b.reader_id = $1
 ORDER BY new DESC, b.updated_at DESC, b.site, b.series_id`

// ListBookmarks returns every Bookmark of one Reader.
func (s *Store) ListBookmarks(ctx context.Context, readerID string) ([]Bookmark, error) {
	v, err := getMany[Bookmark](ctx, s, listBookmarksSQL, readerID)
	if err != nil {
		return nil, fmt.Errorf("store: list bookmarks %s: %w", readerID, err)
	}
	return v, nil
}

// setProgressSQL moves Progress forward only, unless $6 (backwards allowed)
// is set. Setting the same number again changes nothing: idempotent. One
// statement answers all three cases (moved, unchanged, no Bookmark), since a
// userscript re-sends the Progress it already stored on every page it reads.
const setProgressSQL = `
WITH b AS (
    SELECT 1 FROM bookmarks WHERE reader_id = $1 AND site = $2 AND series_id = $3
), moved AS (
    UPDATE bookmarks
       SET progress_num = $4::numeric, progress_url = $5, updated_at = $7::bigint
     WHERE reader_id = $1 AND site = $2 AND series_id = $3
       AND (progress_num IS NULL OR progress_num < $4::numeric OR ($6::boolean AND progress_num <> $4::numeric))
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM b) AS bookmarked, EXISTS (SELECT 1 FROM moved) AS moved`

// ProgressResult says what SetProgress did.
type ProgressResult int

// The answers of SetProgress.
const (
	ProgressMoved     ProgressResult = iota // stored
	ProgressUnchanged                       // already at or past it
)

// SetProgress records a Reader's Progress on a bookmarked Series. It never
// moves Progress backwards unless backwards is set. ErrNotFound when the
// Reader has no Bookmark on the Series.
func (s *Store) SetProgress(ctx context.Context, readerID, site, seriesID, num, url string, backwards bool, now time.Time) (ProgressResult, error) {
	var bookmarked, moved bool
	if err := s.pool.QueryRow(ctx, setProgressSQL, readerID, site, seriesID, num, url, backwards, ms(now)).Scan(&bookmarked, &moved); err != nil {
		return 0, fmt.Errorf("store: set progress %s %s/%s: %w", readerID, site, seriesID, translate(err))
	}
	switch {
	case moved:
		return ProgressMoved, nil
	case !bookmarked:
		return 0, fmt.Errorf("store: set progress %s %s/%s: %w", readerID, site, seriesID, ErrNotFound)
	}
	return ProgressUnchanged, nil
}

const removeBookmarkSQL = `DELETE FROM bookmarks WHERE reader_id = $1 AND site = $2 AND series_id = $3`

// RemoveBookmark deletes one Bookmark; the Series stays (it may become an orphan).
func (s *Store) RemoveBookmark(ctx context.Context, readerID, site, seriesID string) error {
	tag, err := s.pool.Exec(ctx, removeBookmarkSQL, readerID, site, seriesID)
	if err != nil {
		return fmt.Errorf("store: remove bookmark %s %s/%s: %w", readerID, site, seriesID, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: remove bookmark %s %s/%s: %w", readerID, site, seriesID, ErrNotFound)
	}
	return nil
}

const getBookmarkSQL = `
SELECT b.site, b.series_id, s.url, s.title, s.cover_url, s.kind,
       s.latest_chapter_num::text AS latest_chapter, s.latest_chapter_url,
       b.progress_num::text AS progress, b.progress_url,
       (s.latest_chapter_num IS NOT NULL AND (b.progress_num IS NULL OR s.latest_chapter_num > b.progress_num)) AS new,
       b.updated_at
  FROM bookmarks b JOIN series s USING (site, series_id)
 WHERE b.reader_id = $1 AND b.site = $2 AND b.series_id = $3`

// GetBookmark returns one of the Reader's Bookmarks, or ErrNotFound.
func (s *Store) GetBookmark(ctx context.Context, readerID, site, seriesID string) (Bookmark, error) {
	v, err := getOne[Bookmark](ctx, s, getBookmarkSQL, readerID, site, seriesID)
	if err != nil {
		return Bookmark{}, fmt.Errorf("store: get bookmark %s %s/%s: %w", readerID, site, seriesID, err)
	}
	return v, nil
}
