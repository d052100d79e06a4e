package store

import (
	"context"
	"fmt"
	"time"
)

const createLoginLinkSQL = `INSERT INTO login_links (token_hash, discord_id, expires_at) VALUES ($1, $2, $3)`

// CreateLoginLink stores a one-time sign-in link by the hash of its token.
// Expired links are swept in the same call; the table holds a handful of rows.
func (s *Store) CreateLoginLink(ctx context.Context, tokenHash []byte, discordID string, expiresAt, now time.Time) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM login_links WHERE expires_at <= $1`, instant(now)); err != nil {
		return fmt.Errorf("store: sweep login links: %w", translate(err))
	}
	if _, err := s.pool.Exec(ctx, createLoginLinkSQL, tokenHash, discordID, instant(expiresAt)); err != nil {
		return fmt.Errorf("store: create login link: %w", translate(err))
	}
	return nil
}

const consumeLoginLinkSQL = `DELETE FROM login_links WHERE token_hash = $1 RETURNING discord_id, expires_at`

// ConsumeLoginLink spends a link: it works once, and only before it expires.
// The DELETE makes a second use impossible even between two replicas.
func (s *Store) ConsumeLoginLink(ctx context.Context, tokenHash []byte, now time.Time) (string, error) {
	var id string
	var exp time.Time
	if err := s.pool.QueryRow(ctx, consumeLoginLinkSQL, tokenHash).Scan(&id, &exp); err != nil {
		return "", fmt.Errorf("store: consume login link: %w", translate(err))
	}
	if !exp.After(now.Truncate(time.Millisecond)) {
		return "", fmt.Errorf("store: consume login link: expired: %w", ErrNotFound)
	}
	return id, nil
}

const peekLoginLinkSQL = `SELECT discord_id FROM login_links WHERE token_hash = $1 AND expires_at > $2`

// PeekLoginLink says whose a link is without spending it, so the page that
// asks for the click can name who is signing in; ErrNotFound when it was
// used or has expired.
func (s *Store) PeekLoginLink(ctx context.Context, tokenHash []byte, now time.Time) (string, error) {
	var id string
	if err := s.pool.QueryRow(ctx, peekLoginLinkSQL, tokenHash, instant(now)).Scan(&id); err != nil {
		return "", fmt.Errorf("store: peek login link: %w", translate(err))
	}
	return id, nil
}
