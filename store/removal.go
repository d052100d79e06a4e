package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// The removal's three statements, in one transaction: each Reader who
// bookmarks the Series gets the one-time sentence, their Bookmarks go (the
// count's trigger keeps bookmark_count), then the Series (its per-Series
// rows cascade; the tally trigger keeps the per-Site figures, ADR 0009).
const (
	noteRemovedSQL = `
INSERT INTO removed_series (reader_id, title, removed_at)
SELECT reader_id, $3, $4 FROM bookmarks WHERE site = $1 AND series_id = $2`
	dropBookmarksSQL = `DELETE FROM bookmarks WHERE site = $1 AND series_id = $2`
)

// RemoveSeries removes a Series whether or not it is bookmarked, with its
// Bookmarks, and leaves each of their Readers a note naming title. It says
// how many Readers lost a Bookmark; ErrNotFound when there is no such Series.
func (s *Store) RemoveSeries(ctx context.Context, site, id, title string, now time.Time) (int64, error) {
	var readers int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, noteRemovedSQL, site, id, title, instant(now)); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, dropBookmarksSQL, site, id)
		if err != nil {
			return err
		}
		readers = tag.RowsAffected()
		tag, err = tx.Exec(ctx, deleteSeriesSQL, site, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			err = translate(err)
		}
		return 0, fmt.Errorf("store: remove series %s/%s: %w", site, id, err)
	}
	return readers, nil
}

const takeRemovedSQL = `
DELETE FROM removed_series WHERE reader_id = $1 RETURNING title, removed_at`

// TakeRemovedNotes returns the titles of the Series the owner removed from
// readerID's Bookmarks since their last home page, oldest first, and
// deletes them: each is said once.
func (s *Store) TakeRemovedNotes(ctx context.Context, readerID string) ([]string, error) {
	rows, err := s.pool.Query(ctx, takeRemovedSQL, readerID)
	if err != nil {
		return nil, fmt.Errorf("store: take removed notes: %w", translate(err))
	}
	type note struct {
		title string
		at    time.Time
	}
	var notes []note
	for rows.Next() {
		var n note
		if err := rows.Scan(&n.title, &n.at); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: take removed notes: %w", err)
		}
		notes = append(notes, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: take removed notes: %w", translate(err))
	}
	slices.SortStableFunc(notes, func(a, b note) int { return a.at.Compare(b.at) })
	titles := make([]string, len(notes))
	for i, n := range notes {
		titles[i] = n.title
	}
	return titles, nil
}
