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
	if _, err := s.pool.Exec(ctx, upsertReaderSQL, r.DiscordID, r.Name, r.AvatarURL, ms(now)); err != nil {
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
