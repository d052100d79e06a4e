package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Token is a userscript token as the Reader sees it (never its value).
type Token struct {
	ID         int64     `db:"id"`
	Label      string    `db:"label"`
	CreatedAt  time.Time `db:"created_at"`
	LastUsedAt time.Time `db:"last_used_at"`
}

// MaxTokens is how many API tokens one Reader may hold: one per browser
// they read in is far fewer.
const MaxTokens = 20

// lockReaderSQL holds the Reader's row for the transaction, so two token
// requests at once count one after the other and never make the 21st.
const lockReaderSQL = `SELECT 1 FROM readers WHERE discord_id = $1 FOR UPDATE`

const createTokenSQL = `
INSERT INTO reader_tokens (reader_id, token_hash, label, created_at)
SELECT $1, $2, $3, $4
 WHERE (SELECT count(*) FROM reader_tokens WHERE reader_id = $1) < $5
RETURNING id`

// CreateToken stores a userscript token by its keyed hash. ErrConflict: the
// Reader already holds MaxTokens.
func (s *Store) CreateToken(ctx context.Context, readerID string, hash []byte, label string, now time.Time) (int64, error) {
	var id int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockReaderSQL, readerID); err != nil {
			return err
		}
		return tx.QueryRow(ctx, createTokenSQL, readerID, hash, label, instant(now), MaxTokens).Scan(&id)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("store: create token for %s: %w", readerID, ErrConflict)
	}
	if err != nil {
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

// readerByTokenSQL finds the token's Reader and stamps its use, and the
// Reader's last seen (CONTEXT.md, Last seen: the userscript is a Reader
// using the server as much as a page is), each at most once an hour, so an
// API call costs one statement and writes a row at most hourly. (An UPDATE that sets a column to its own value still writes a new
// row version; the stamp is therefore a separate arm that matches nothing
// inside the hour.) $2 is cast: left to infer it from "$2 - 3600000",
// PostgreSQL makes it an int4, which no unix-millisecond time fits.
const readerByTokenSQL = `
WITH t AS (
    SELECT id, reader_id, label, last_used_at FROM reader_tokens WHERE token_hash = $1
), stamp AS (
    UPDATE reader_tokens r SET last_used_at = $2::timestamptz
      FROM t WHERE r.id = t.id AND coalesce(t.last_used_at < $2::timestamptz - interval '1 hour', true)
), seen AS (
    UPDATE readers r SET last_seen_at = $2::timestamptz
      FROM t WHERE r.discord_id = t.reader_id AND ` + seenDue + `
)
SELECT t.id, t.reader_id, t.label, coalesce(r.guild_check_due_at <= $2::timestamptz, false)
  FROM t JOIN readers r ON r.discord_id = t.reader_id`

// TokenUse is the token an API request presented: which one, and whose.
type TokenUse struct {
	ID       int64
	ReaderID string
	Label    string
	// GuildCheckDue: the Reader's guild membership is due to be asked
	// again (CONTEXT.md, Guild re-check).
	GuildCheckDue bool
}

// ReaderByToken returns the token a keyed hash names and its Reader, or
// ErrNotFound (never issued, or revoked: a revoked token is deleted, so it
// fails on its very next use).
func (s *Store) ReaderByToken(ctx context.Context, hash []byte, now time.Time) (TokenUse, error) {
	var u TokenUse
	if err := s.pool.QueryRow(ctx, readerByTokenSQL, hash, instant(now)).Scan(&u.ID, &u.ReaderID, &u.Label, &u.GuildCheckDue); err != nil {
		return TokenUse{}, fmt.Errorf("store: reader by token: %w", translate(err))
	}
	return u, nil
}
