package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// CoverDue is a Series whose cover address has not been fetched yet.
type CoverDue struct {
	SeriesID string `db:"series_id"`
	CoverURL string `db:"cover_url"`
}

// nextCoverSQL reads the series_cover_due partial index: only Series whose
// cover address differs from the one last fetched, oldest retry first.
const nextCoverSQL = `
SELECT series_id, cover_url FROM series
 WHERE site = $1 AND cover_url <> '' AND cover_url <> cover_tried
   AND coalesce(cover_retry_at, timestamptz '-infinity') <= $2
 ORDER BY coalesce(cover_retry_at, timestamptz '-infinity')
 LIMIT 1`

// NextCover returns one Series of the Site whose cover is due for a fetch,
// or ErrNotFound when none is.
func (s *Store) NextCover(ctx context.Context, site string, now time.Time) (CoverDue, error) {
	v, err := getOne[CoverDue](ctx, s, nextCoverSQL, site, instant(now))
	if err != nil {
		return CoverDue{}, fmt.Errorf("store: next cover %s: %w", site, err)
	}
	return v, nil
}

// saveCoverSQL keeps the image and marks its address fetched, in one
// statement. A Series deleted meanwhile keeps nothing (the join finds no row).
const saveCoverSQL = `
WITH marked AS (
    UPDATE series SET cover_tried = $3, cover_retry_at = NULL
     WHERE site = $1 AND series_id = $2
    RETURNING site, series_id
)
INSERT INTO covers (site, series_id, source_url, content_type, etag, body, fetched_at)
SELECT site, series_id, $3, $4, $5, $6, $7 FROM marked
ON CONFLICT (site, series_id) DO UPDATE
   SET source_url = excluded.source_url, content_type = excluded.content_type,
       etag = excluded.etag, body = excluded.body, fetched_at = excluded.fetched_at`

// SaveCover stores a Series' cover image (bytes already sniffed as an image)
// fetched from sourceURL.
func (s *Store) SaveCover(ctx context.Context, site, id, sourceURL, contentType string, body []byte, now time.Time) error {
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	if _, err := s.pool.Exec(ctx, saveCoverSQL, site, id, sourceURL, contentType, etag, body, instant(now)); err != nil {
		return fmt.Errorf("store: save cover %s/%s: %w", site, id, translate(err))
	}
	return nil
}

const coverFailedSQL = `UPDATE series SET cover_retry_at = $3 WHERE site = $1 AND series_id = $2`

// CoverFailed records that a cover fetch failed: the Series is not tried
// again before retryAt. A cover stored earlier stays.
func (s *Store) CoverFailed(ctx context.Context, site, id string, retryAt time.Time) error {
	if _, err := s.pool.Exec(ctx, coverFailedSQL, site, id, stamp(retryAt)); err != nil {
		return fmt.Errorf("store: cover failed %s/%s: %w", site, id, translate(err))
	}
	return nil
}

// Cover is a stored cover image.
type Cover struct {
	SourceURL   string `db:"source_url"`
	ContentType string `db:"content_type"`
	ETag        string `db:"etag"`
	Body        []byte `db:"body"`
}

const getCoverSQL = `SELECT source_url, content_type, etag, body FROM covers WHERE site = $1 AND series_id = $2`

// GetCover returns a Series' stored cover, or ErrNotFound.
func (s *Store) GetCover(ctx context.Context, site, id string) (Cover, error) {
	v, err := getOne[Cover](ctx, s, getCoverSQL, site, id)
	if err != nil {
		return Cover{}, fmt.Errorf("store: get cover %s/%s: %w", site, id, err)
	}
	return v, nil
}
