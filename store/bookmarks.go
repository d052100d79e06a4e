package store

import (
	"context"
	"fmt"
)

const addBookmarkSQL = `
INSERT INTO bookmarks (reader_id, site, series_id, created_at, updated_at)
VALUES ($1, $2, $3, $4, $4)
ON CONFLICT (reader_id, site, series_id) DO NOTHING`

// AddBookmark records that a Reader follows a Series (idempotent).
func (s *Store) AddBookmark(ctx context.Context, readerID, site, seriesID string, now int64) error {
	if _, err := s.pool.Exec(ctx, addBookmarkSQL, readerID, site, seriesID, now); err != nil {
		return fmt.Errorf("store: add bookmark %s %s/%s: %w", readerID, site, seriesID, translate(err))
	}
	return nil
}
