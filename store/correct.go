package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The correction's statements (issue 24, item 2). Bookmarks move with the
// higher Progress kept, compared as numbers (progress_num is numeric).
const (
	correctURLSQL = `UPDATE series SET url = $3 WHERE site = $1 AND series_id = $2`
	// A new Series of the new id: title and kind carried over, Latest
	// Chapter left to its first read.
	copySeriesSQL = `
INSERT INTO series (site, series_id, url, title, cover_url, kind, created_at)
SELECT site, $3, $4, title, cover_url, kind, $5 FROM series WHERE site = $1 AND series_id = $2
ON CONFLICT (site, series_id) DO UPDATE SET url = EXCLUDED.url`
	moveBookmarksSQL = `
INSERT INTO bookmarks (reader_id, site, series_id, progress_num, progress_url, created_at, updated_at)
SELECT reader_id, site, $3, progress_num, progress_url, created_at, $4
FROM bookmarks WHERE site = $1 AND series_id = $2
ON CONFLICT (reader_id, site, series_id) DO UPDATE SET
    progress_num = CASE WHEN bookmarks.progress_num IS NULL
                          OR EXCLUDED.progress_num > bookmarks.progress_num
                        THEN EXCLUDED.progress_num ELSE bookmarks.progress_num END,
    progress_url = CASE WHEN bookmarks.progress_num IS NULL
                          OR EXCLUDED.progress_num > bookmarks.progress_num
                        THEN EXCLUDED.progress_url ELSE bookmarks.progress_url END,
    updated_at = EXCLUDED.updated_at`
)

// CorrectAddress sets a Series' address to addr, which the caller
// recognised as Series newID of the same Site. When newID is this Series'
// own id only the address changes; the failure row is left alone, cleared
// only by the next read that succeeds. Otherwise the Series merges into
// newID's (made when missing): Bookmarks move, the higher Progress wins, and
// the old Series goes. ErrNotFound when there is no such Series.
func (s *Store) CorrectAddress(ctx context.Context, site, id, newID, addr string, now time.Time) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if newID == id {
			return affected(tx.Exec(ctx, correctURLSQL, site, id, addr))
		}
		if err := affected(tx.Exec(ctx, copySeriesSQL, site, id, newID, addr, instant(now))); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, moveBookmarksSQL, site, id, newID, instant(now)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, dropBookmarksSQL, site, id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, deleteSeriesSQL, site, id)
		return err
	})
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			err = translate(err)
		}
		return fmt.Errorf("store: correct address %s/%s: %w", site, id, err)
	}
	return nil
}

// affected is ErrNotFound when a statement touched no row.
func affected(tag pgconn.CommandTag, err error) error {
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}
