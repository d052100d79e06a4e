package store

import (
	"context"
	"fmt"
	"time"
)

// Reader is one member of the group who has signed in.
type Reader struct {
	DiscordID  string    `db:"discord_id"`
	Name       string    `db:"name"`
	AvatarURL  string    `db:"avatar_url"`
	CreatedAt  time.Time `db:"created_at"`
	LastSeenAt time.Time `db:"last_seen_at"`
}

const upsertReaderSQL = `
INSERT INTO readers (discord_id, name, avatar_url, created_at, last_seen_at)
VALUES ($1, $2, $3, $4, $4)
ON CONFLICT (discord_id) DO UPDATE
   SET name = excluded.name, avatar_url = excluded.avatar_url, last_seen_at = excluded.last_seen_at`

// UpsertReader records a sign-in.
func (s *Store) UpsertReader(ctx context.Context, r Reader, now time.Time) error {
	if _, err := s.pool.Exec(ctx, upsertReaderSQL, r.DiscordID, r.Name, r.AvatarURL, instant(now)); err != nil {
		return fmt.Errorf("store: upsert reader %s: %w", r.DiscordID, translate(err))
	}
	return nil
}

const getReaderSQL = `SELECT discord_id, name, avatar_url, created_at, last_seen_at FROM readers WHERE discord_id = $1`

// GetReader returns one Reader or ErrNotFound.
func (s *Store) GetReader(ctx context.Context, discordID string) (Reader, error) {
	r, err := getOne[Reader](ctx, s, getReaderSQL, discordID)
	if err != nil {
		return Reader{}, fmt.Errorf("store: get reader %s: %w", discordID, err)
	}
	return r, nil
}

const sessionEpochSQL = `SELECT session_epoch FROM readers WHERE discord_id = $1`

// SessionEpoch is the epoch a Reader's valid session cookies carry
// (ErrNotFound for an unknown Reader).
func (s *Store) SessionEpoch(ctx context.Context, discordID string) (int64, error) {
	var e int64
	if err := s.pool.QueryRow(ctx, sessionEpochSQL, discordID).Scan(&e); err != nil {
		return 0, fmt.Errorf("store: session epoch %s: %w", discordID, translate(err))
	}
	return e, nil
}

const endSessionsSQL = `UPDATE readers SET session_epoch = session_epoch + 1 WHERE discord_id = $1`

// EndSessions makes every session cookie of the Reader invalid.
func (s *Store) EndSessions(ctx context.Context, discordID string) error {
	if _, err := s.pool.Exec(ctx, endSessionsSQL, discordID); err != nil {
		return fmt.Errorf("store: end sessions %s: %w", discordID, translate(err))
	}
	return nil
}

const listReadersSQL = `SELECT discord_id, name, avatar_url, created_at, last_seen_at FROM readers ORDER BY last_seen_at DESC NULLS LAST, discord_id`

// ListReaders returns every Reader, the most recently seen first. The group
// is small (one Discord guild), so the list is whole.
func (s *Store) ListReaders(ctx context.Context) ([]Reader, error) {
	v, err := getMany[Reader](ctx, s, listReadersSQL)
	if err != nil {
		return nil, fmt.Errorf("store: list readers: %w", err)
	}
	return v, nil
}

// seenSessionSQL reads the session epoch and stamps last_seen_at at most
// once an hour, in one statement (as readerByTokenSQL stamps a token): a
// page view costs no extra write within the hour. The SELECT sees the row
// as it was before the stamp, which changes no epoch.
const seenSessionSQL = `
WITH stamp AS (
    UPDATE readers SET last_seen_at = $2::timestamptz
     WHERE discord_id = $1 AND coalesce(last_seen_at < $2::timestamptz - interval '1 hour', true)
)
SELECT session_epoch FROM readers WHERE discord_id = $1`

// SeenSession is SessionEpoch for a request: it also records that the
// Reader was seen (to the hour). ErrNotFound for an unknown Reader.
func (s *Store) SeenSession(ctx context.Context, discordID string, now time.Time) (int64, error) {
	var e int64
	if err := s.pool.QueryRow(ctx, seenSessionSQL, discordID, instant(now)).Scan(&e); err != nil {
		return 0, fmt.Errorf("store: session epoch %s: %w", discordID, translate(err))
	}
	return e, nil
}

const nameReaderSQL = `
INSERT INTO readers (discord_id, name, created_at) VALUES ($1, $2, $3)
ON CONFLICT (discord_id) DO UPDATE SET name = excluded.name`

// NameReader records a Reader the owner named before they ever signed in
// (a one-time link for someone without Discord). Never seen until they
// use it.
func (s *Store) NameReader(ctx context.Context, discordID, name string, now time.Time) error {
	if _, err := s.pool.Exec(ctx, nameReaderSQL, discordID, name, instant(now)); err != nil {
		return fmt.Errorf("store: name reader %s: %w", discordID, translate(err))
	}
	return nil
}
