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

	// Finished: the Series existed and the owner had Finished it, so no
	// Poll will read it (CONTEXT.md, Finished); Title is its stored title.
	Finished bool
	Title    string
}

const addedSeriesStateSQL = `SELECT finished_at IS NOT NULL, title FROM series WHERE site = $1 AND series_id = $2`

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
	at := instant(now)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The Series, with its first Poll asked for and its Lane woken
		// (addSeriesSQL); the notification leaves only if this commits.
		var created int
		if err := tx.QueryRow(ctx, addSeriesSQL, in.Site, in.SeriesID, in.URL, "", "", in.Kind, at, stamp(now)).Scan(&created); err != nil {
			return err
		}
		res.SeriesCreated = created == 1
		if err := tx.QueryRow(ctx, addedSeriesStateSQL, in.Site, in.SeriesID).Scan(&res.Finished, &res.Title); err != nil {
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
