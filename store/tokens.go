package store

import (
	"context"
	"fmt"
	"time"
)

// Token is a userscript token as the Reader sees it (never its value).
type Token struct {
	ID         int64     `db:"id"`
	Label      string    `db:"label"`
	CreatedAt  time.Time `db:"created_at"`
	LastUsedAt time.Time `db:"last_used_at"`
}

const createTokenSQL = `INSERT INTO reader_tokens (reader_id, token_hash, label, created_at) VALUES ($1, $2, $3, $4) RETURNING id`

// CreateToken stores a userscript token by its keyed hash.
func (s *Store) CreateToken(ctx context.Context, readerID string, hash []byte, label string, now time.Time) (int64, error) {
	var id int64
	if err := s.pool.QueryRow(ctx, createTokenSQL, readerID, hash, label, instant(now)).Scan(&id); err != nil {
		return 0, fmt.Errorf("store: create token for %s: %w", readerID, translate(err))
	}
	return id, nil
}

const listTokensSQL = `SELECT id, label, created_at, last_used_at FROM reader_tokens WHERE reader_id = $1 ORDER BY created_at DESC, id DESC`

// ListTokens returns a Reader's tokens, newest first.
func (s *Store) ListTokens(ctx context.Context, readerID string) ([]Token, error) {
	v, err := getMany[Token](ctx, s, listTokensSQL, readerID)
	if err != nil {
		return nil, fmt.Errorf("store: list tokens %s: %w", readerID, err)
	}
	return v, nil
}

const revokeTokenSQL = `DELETE FROM reader_tokens WHERE reader_id = $1 AND id = $2`

// RevokeToken deletes one of the Reader's own tokens.
func (s *Store) RevokeToken(ctx context.Context, readerID string, id int64) error {
	tag, err := s.pool.Exec(ctx, revokeTokenSQL, readerID, id)
	if err != nil {
		return fmt.Errorf("store: revoke token %d: %w", id, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: revoke token %d: %w", id, ErrNotFound)
	}
	return nil
}

// readerByTokenSQL finds the token's Reader and stamps its use at most once
// an hour, so an API call costs one statement and writes a row at most
// hourly. (An UPDATE that sets a column to its own value still writes a new
// row version; the stamp is therefore a separate arm that matches nothing
// inside the hour.) $2 is cast: left to infer it from "$2 - 3600000",
// PostgreSQL makes it an int4, which no unix-millisecond time fits.
const readerByTokenSQL = `
WITH t AS (
    SELECT id, reader_id, label, last_used_at FROM reader_tokens WHERE token_hash = $1
), stamp AS (
    UPDATE reader_tokens r SET last_used_at = $2::timestamptz
      FROM t WHERE r.id = t.id AND coalesce(t.last_used_at < $2::timestamptz - interval '1 hour', true)
)
SELECT id, reader_id, label FROM t`

// TokenUse is the token an API request presented: which one, and whose.
type TokenUse struct {
	ID       int64
	ReaderID string
	Label    string
}

// ReaderByToken returns the token a keyed hash names and its Reader, or
// ErrNotFound (never issued, or revoked: a revoked token is deleted, so it
// fails on its very next use).
func (s *Store) ReaderByToken(ctx context.Context, hash []byte, now time.Time) (TokenUse, error) {
	var u TokenUse
	if err := s.pool.QueryRow(ctx, readerByTokenSQL, hash, instant(now)).Scan(&u.ID, &u.ReaderID, &u.Label); err != nil {
		return TokenUse{}, fmt.Errorf("store: reader by token: %w", translate(err))
	}
	return u, nil
}
