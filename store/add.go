package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// AddRequest is one address pasted into an add box, already recognised.
type AddRequest struct {
	Site, SeriesID, URL, Kind string
	// ReaderID is whose Bookmark the address becomes; "" adds the Series
	// alone (the owner's box, which creates orphans on purpose).
	ReaderID string
	// Chapter is the canonical number a chapter address names ("" for a
	// Series address, or a chapter address without a number); it becomes
	// the Reader's Progress when that moves it forward.
	Chapter, ChapterURL string
}

// AddResult says what one add did.
type AddResult struct {
	SeriesCreated   bool // the Series was new: it was asked for a Forced Poll
	BookmarkCreated bool // the Reader had no Bookmark on it before
	ProgressMoved   bool // Progress moved forward to the address's chapter
}

// addSeriesSQL creates the Series with a Forced Poll request already on it,
// and wakes its Lane in the same statement (as the owner's Forced Poll
// does), so its title, cover and Latest Chapter arrive within a pass. The
// notification is delivered only if the transaction commits.
var addSeriesSQL = `WITH u AS (
    INSERT INTO series (site, series_id, url, kind, created_at, force_poll_at)
    VALUES ($1, $2, $3, $4, $5, $5)
    ON CONFLICT (site, series_id) DO NOTHING
    RETURNING site
)
SELECT count(*) > 0 FROM u, LATERAL (SELECT pg_notify('` + LaneWakeChannel + `', u.site)) n`

const addBookmarkNewSQL = `
INSERT INTO bookmarks (reader_id, site, series_id, created_at, updated_at)
VALUES ($1, $2, $3, $4, $4)
ON CONFLICT (reader_id, site, series_id) DO NOTHING
RETURNING true`

// AddAddress adds one recognised address in one transaction: the Series if
// it is new, the Reader's Bookmark, and Progress from a chapter address.
// Either all of it happens or none of it does.
func (s *Store) AddAddress(ctx context.Context, in AddRequest, now time.Time) (AddResult, error) {
	var res AddResult
	at := now.UnixMilli()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, addSeriesSQL, in.Site, in.SeriesID, in.URL, in.Kind, at).Scan(&res.SeriesCreated); err != nil {
			return err
		}
		if in.ReaderID == "" {
			return nil
		}
		err := tx.QueryRow(ctx, addBookmarkNewSQL, in.ReaderID, in.Site, in.SeriesID, at).Scan(&res.BookmarkCreated)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if in.Chapter == "" {
			return nil
		}
		var bookmarked bool
		return tx.QueryRow(ctx, setProgressSQL, in.ReaderID, in.Site, in.SeriesID, in.Chapter, in.ChapterURL, false, at).
			Scan(&bookmarked, &res.ProgressMoved)
	})
	if err != nil {
		return AddResult{}, fmt.Errorf("store: add %s/%s for %q: %w", in.Site, in.SeriesID, in.ReaderID, translate(err))
	}
	return res, nil
}
