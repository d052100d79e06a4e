package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/word"
)

const addBookmarkSQL = `
INSERT INTO bookmarks (reader_id, site, series_id, created_at, updated_at)
VALUES ($1, $2, $3, $4, $4)
ON CONFLICT (reader_id, site, series_id) DO NOTHING`

// AddBookmark records that a Reader follows a Series (idempotent).
func (s *Store) AddBookmark(ctx context.Context, readerID, site, seriesID string, now time.Time) error {
	if _, err := s.pool.Exec(ctx, addBookmarkSQL, readerID, site, seriesID, instant(now)); err != nil {
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
	CoverTried    string    `db:"cover_tried"` // see Series.CoverTried
	Kind          string    `db:"kind"`
	LatestChapter *string   `db:"latest_chapter"`
	LatestURL     string    `db:"latest_chapter_url"`
	LatestAt      time.Time `db:"latest_chapter_at"` // when Latest Chapter reached its number (the zero time: not known)
	Progress      *string   `db:"progress"`
	ProgressURL   string    `db:"progress_url"`
	New           bool      `db:"new"` // the ember: a chapter past this Reader's Progress
	UpdatedAt     time.Time `db:"updated_at"`

	// RaisedBy and RaisedByName name the Reader whose Sighting raised Latest
	// Chapter while no read of the Site's page has shown it ("" when a Poll
	// stands behind it; CONTEXT.md, Sighting).
	RaisedBy     string `db:"raised_by"`
	RaisedByName string `db:"raised_by_name"`
	// PageRead: a Poll has read a number from the Site's page. Until then
	// a raised number is nobody's but the Readers who sighted it.
	PageRead bool `db:"page_read"`

	// The Series' health, read by the same query (issue 24, item 5): the
	// owner's Finished flag, the start of its run of failures (series'
	// copy of the failure row, migration 0009) and the Completion hint
	// (CONTEXT.md, Finished, Completion hint); the zero time for none.
	FinishedAt      time.Time `db:"finished_at"`
	FailingSince    time.Time `db:"failing_since"`
	SiteCompletedAt time.Time `db:"site_completed_at"`
}

// Failing is the owner's failing filter read on one row (failingSQL; CONTEXT.md,
// Rules: Failing filter): a chapter was once read and the run of failures began
// more than word.OwnerWindow before now, so the Reader's mark and the owner's
// list agree.
func (b Bookmark) Failing(now time.Time) bool {
	return b.LatestChapter != nil && !b.FailingSince.IsZero() && b.FailingSince.Before(now.Add(-word.OwnerWindow))
}

// BookmarkQuery narrows a Reader's list: only those with the ember, and a
// piece of the title (matched case-insensitively, as typed). Limit, when
// above 0, keeps the list's first Limit rows.
type BookmarkQuery struct {
	NewOnly bool
	Search  string
	Limit   int
}

// listBookmarksSQL: the Reader's Bookmarks, new chapters first, then the
// most recent chapter first. Served by the bookmarks primary key (reader_id
// prefix): one Reader's list is sorted, never the whole table. $3 is the
// title piece with LIKE's own characters escaped, "" for none.
//
// The Latest Chapter a Reader sees is the Series', or their own Sighting
// above it while no Poll has read a number from the page (CONTEXT.md,
// Sighting): a number only they stand behind lights only their ember. The
// Series and the own Sighting are each a LATERAL with a LIMIT (their keys
// make them one row anyway), as in feedEntriesSQL: the planner keeps one
// primary-key probe per Bookmark instead of hashing every Series once a
// Reader bookmarks a tenth of them (TestThePlans).
const bookmarkSelect = `
SELECT b.site, b.series_id, s.url, s.title, s.cover_url, s.cover_tried, s.kind,
       coalesce(o.chapter_num, s.latest_chapter_num)::text AS latest_chapter,
       CASE WHEN o.reader_id IS NULL THEN s.latest_chapter_url ELSE o.chapter_url END AS latest_chapter_url,
       coalesce(o.sighted_at, s.latest_chapter_at) AS latest_chapter_at,
       b.progress_num::text AS progress, b.progress_url,
       (coalesce(o.chapter_num, s.latest_chapter_num) IS NOT NULL AND
        (b.progress_num IS NULL OR coalesce(o.chapter_num, s.latest_chapter_num) > b.progress_num)) AS new,
       b.updated_at, coalesce(o.reader_id, s.latest_raised_by, '') AS raised_by, coalesce(rr.name, '') AS raised_by_name,
       s.polled_chapter_num IS NOT NULL AS page_read,
       s.finished_at, s.failing_since, s.site_completed_at
  FROM bookmarks b
 CROSS JOIN LATERAL (
        SELECT * FROM series s WHERE s.site = b.site AND s.series_id = b.series_id LIMIT 1) s
  LEFT JOIN LATERAL (
        SELECT o.reader_id, o.chapter_num, o.chapter_url, o.sighted_at FROM own_sightings o
         WHERE o.site = b.site AND o.series_id = b.series_id AND o.reader_id = b.reader_id
           AND s.polled_chapter_num IS NULL AND (s.latest_chapter_num IS NULL OR o.chapter_num > s.latest_chapter_num)
         LIMIT 1) o ON true
  LEFT JOIN readers rr ON rr.discord_id = coalesce(o.reader_id, s.latest_raised_by)
 WHERE b.reader_id = $1`

// The search matches what the row shows, as the owner's does (shownName),
// and the series_id.
var listBookmarksSQL = `SELECT * FROM (` + bookmarkSelect + `
   AND ($3 = '' OR ` + shownName("s") + ` ILIKE '%' || $3 || '%' OR b.series_id ILIKE '%' || $3 || '%')
) l
 WHERE (NOT $2::boolean OR l.new)
 ORDER BY l.new DESC, l.latest_chapter_at DESC NULLS LAST, l.updated_at DESC, l.site, l.series_id
 LIMIT NULLIF($4::int, 0)`

const getBookmarkSQL = bookmarkSelect + ` AND b.site = $2 AND b.series_id = $3`

// GetBookmark returns one of the Reader's Bookmarks, or ErrNotFound (also
// for another Reader's: the Reader is part of the key).
func (s *Store) GetBookmark(ctx context.Context, readerID, site, seriesID string) (Bookmark, error) {
	v, err := getOne[Bookmark](ctx, s, getBookmarkSQL, readerID, site, seriesID)
	if err != nil {
		return Bookmark{}, fmt.Errorf("store: get bookmark %s %s/%s: %w", readerID, site, seriesID, err)
	}
	return v, nil
}

// ListBookmarks returns every Bookmark of one Reader.
func (s *Store) ListBookmarks(ctx context.Context, readerID string) ([]Bookmark, error) {
	return s.QueryBookmarks(ctx, readerID, BookmarkQuery{})
}

// QueryBookmarks returns the Reader's Bookmarks that match q.
func (s *Store) QueryBookmarks(ctx context.Context, readerID string, q BookmarkQuery) ([]Bookmark, error) {
	v, err := getMany[Bookmark](ctx, s, listBookmarksSQL, readerID, q.NewOnly, likeEscape(strings.TrimSpace(q.Search)), q.Limit)
	if err != nil {
		return nil, fmt.Errorf("store: list bookmarks %s: %w", readerID, err)
	}
	return v, nil
}

// likeEscape makes a typed piece of title match itself under LIKE (whose
// default escape character is the backslash).
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
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
       SET progress_num = $4::numeric, progress_url = $5, updated_at = $7::timestamptz
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
	if err := s.pool.QueryRow(ctx, setProgressSQL, readerID, site, seriesID, num, url, backwards, instant(now)).Scan(&bookmarked, &moved); err != nil {
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

const restoreBookmarkSQL = `
INSERT INTO bookmarks (reader_id, site, series_id, progress_num, progress_url, created_at, updated_at)
VALUES ($1, $2, $3, NULLIF($4, '')::numeric, $5, $6, $6)
ON CONFLICT (reader_id, site, series_id) DO NOTHING`

// RestoreBookmark puts back a Bookmark the Reader just removed, with the
// Progress it had ("" for none): the remove's Undo. A Bookmark that exists
// again already is left as it is; a Series the owner deleted meanwhile is
// ErrConflict.
func (s *Store) RestoreBookmark(ctx context.Context, readerID, site, seriesID, progress, progressURL string, now time.Time) error {
	if _, err := s.pool.Exec(ctx, restoreBookmarkSQL, readerID, site, seriesID, progress, progressURL, instant(now)); err != nil {
		return fmt.Errorf("store: restore bookmark %s %s/%s: %w", readerID, site, seriesID, translate(err))
	}
	return nil
}
