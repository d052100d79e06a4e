package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Series is one work on one Site. LatestChapter is a canonical decimal
// string, or nil when no chapter was ever known.
type Series struct {
	Site     string `db:"site"`
	SeriesID string `db:"series_id"`
	URL      string `db:"url"`
	Title    string `db:"title"`
	CoverURL string `db:"cover_url"`
	// CoverTried is the cover address whose image is stored ("" = none yet):
	// pages show /covers/… only when it is set, else the drawn initial.
	CoverTried       string    `db:"cover_tried"`
	Kind             string    `db:"kind"`
	LatestChapter    *string   `db:"latest_chapter"`
	LatestChapterURL string    `db:"latest_chapter_url"`
	LatestRaisedBy   *string   `db:"latest_raised_by"`
	CheckedAt        time.Time `db:"checked_at"`
	ForcePollAt      time.Time `db:"force_poll_at"`
	FinishedAt       time.Time `db:"finished_at"`
	SiteCompletedAt  time.Time `db:"site_completed_at"`
	CreatedAt        time.Time `db:"created_at"`

	// PolledChapter is the highest number a correct read of the Series'
	// page has shown (nil: none yet): the base of the Sighting bound
	// (CONTEXT.md, Sighting).
	PolledChapter *string `db:"polled_chapter"`

	// The scheduler's facts (ADR 0016); zero times are NULL.
	NextReadAt    time.Time `db:"next_read_at"`
	SightedAt     time.Time `db:"sighted_at"`
	ListedChapter *string   `db:"listed_chapter"`
	ListedAt      time.Time `db:"listed_at"`
	ArrivedAt     time.Time `db:"chapter_arrived_at"`
	// CadenceS is the learned seconds between two chapters; 0 is unknown.
	CadenceS      int `db:"cadence_s"`
	BookmarkCount int `db:"bookmark_count"`
}

// SeriesColumns is the projection every Series read uses.
const SeriesColumns = `site, series_id, url, title, cover_url, cover_tried, kind,
	latest_chapter_num::text AS latest_chapter, latest_chapter_url, latest_raised_by,
	polled_chapter_num::text AS polled_chapter,
	checked_at, force_poll_at, finished_at, site_completed_at, created_at,
	next_read_at, sighted_at, listed_chapter_num::text AS listed_chapter, listed_at,
	chapter_arrived_at, coalesce(cadence_s, 0) AS cadence_s, bookmark_count`

const createSeriesSQL = `
INSERT INTO series (site, series_id, url, title, cover_url, kind, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (site, series_id) DO NOTHING`

// CreateSeries adds a Series if it is not already known; an existing row is
// left untouched (the Poll owns its facts from then on).
func (s *Store) CreateSeries(ctx context.Context, in Series, now time.Time) error {
	if _, err := s.pool.Exec(ctx, createSeriesSQL, in.Site, in.SeriesID, in.URL, in.Title, in.CoverURL, in.Kind, instant(now)); err != nil {
		return fmt.Errorf("store: create series %s/%s: %w", in.Site, in.SeriesID, translate(err))
	}
	return nil
}

const getSeriesSQL = `SELECT ` + SeriesColumns + ` FROM series WHERE site = $1 AND series_id = $2`

// GetSeries returns one Series or ErrNotFound.
func (s *Store) GetSeries(ctx context.Context, site, id string) (Series, error) {
	v, err := getOne[Series](ctx, s, getSeriesSQL, site, id)
	if err != nil {
		return Series{}, fmt.Errorf("store: get series %s/%s: %w", site, id, err)
	}
	return v, nil
}

// ErrBookmarked: DeleteSeries met a Bookmark; a bookmarked Series goes only
// by RemoveSeries, after the owner's confirm.
var ErrBookmarked = fmt.Errorf("%w: series is bookmarked", ErrConflict)

const deleteSeriesSQL = `DELETE FROM series WHERE site = $1 AND series_id = $2`

// DeleteSeries removes an orphan Series in one statement. Its per-Series rows
// (failure row) cascade; a Bookmark refuses the delete (ErrBookmarked).
func (s *Store) DeleteSeries(ctx context.Context, site, id string) error {
	tag, err := s.pool.Exec(ctx, deleteSeriesSQL, site, id)
	if err != nil {
		err = translate(err)
		if errors.Is(err, ErrConflict) {
			err = ErrBookmarked
		}
		return fmt.Errorf("store: delete series %s/%s: %w", site, id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: delete series %s/%s: %w", site, id, ErrNotFound)
	}
	return nil
}

// deleteOrphansSQL deletes one Site's oldest orphans, orphaned before $2,
// at most $3 of them (ADR 0024): it walks series_orphaned, the orphans'
// own index, so it touches only the rows it deletes. A Series a Bookmark
// is being added to holds a key-share lock its FOR UPDATE skips; the outer
// filter re-checks the count on the row it deletes. Its per-Series rows
// (failure row, Arrivals, announcements) cascade.
const deleteOrphansSQL = `
DELETE FROM series WHERE bookmark_count = 0 AND (site, series_id) IN (
    SELECT site, series_id FROM series
     WHERE site = $1 AND bookmark_count = 0 AND orphaned_at < $2
     ORDER BY orphaned_at LIMIT $3
       FOR UPDATE SKIP LOCKED)`

// OrphanBatch is the most orphans one retention delete removes, so a first
// run on a large, old Lane never holds its locks for long; the rest go at
// the next prune.
const OrphanBatch = 500

// DeleteOrphans deletes site's Series that have been orphans since before
// cutoff, at most OrphanBatch of them, and says how many went.
func (s *Store) DeleteOrphans(ctx context.Context, site string, cutoff time.Time) (int64, error) {
	tag, err := s.exec(ctx, deleteOrphansSQL, site, instant(cutoff), OrphanBatch)
	if err != nil {
		return 0, fmt.Errorf("store: delete orphans %s: %w", site, translate(err))
	}
	return tag.RowsAffected(), nil
}

// addSeriesSQL creates a Series asked for by a Reader and, only when the row
// is new, asks for its first Poll at once (force_poll_at) and wakes its Lane,
// so its facts appear within a minute. An existing row is left untouched.
var addSeriesSQL = `
WITH ins AS (
    INSERT INTO series (site, series_id, url, title, cover_url, kind, created_at, force_poll_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
    ON CONFLICT (site, series_id) DO NOTHING
    RETURNING site
)
SELECT count(*) FROM ins, LATERAL (SELECT pg_notify('` + LaneWakeChannel + `', ins.site)) n`

// AddSeries creates a Series a Reader named by address and asks for its first
// Poll; it reports whether the Series was new.
func (s *Store) AddSeries(ctx context.Context, in Series, now time.Time) (created bool, err error) {
	var n int
	if err := s.pool.QueryRow(ctx, addSeriesSQL, in.Site, in.SeriesID, in.URL, in.Title, in.CoverURL, in.Kind, instant(now), stamp(now)).Scan(&n); err != nil {
		return false, fmt.Errorf("store: add series %s/%s: %w", in.Site, in.SeriesID, translate(err))
	}
	return n == 1, nil
}
