package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ServerWebhook is what the running server recorded of its own webhook at
// start (migration 0010): whether one is configured, and the hash of its
// address (the dead_webhooks key; the address itself is a secret and never
// stored). The notices command reads it, so it reports what the server does
// whatever the command's own environment holds.
type ServerWebhook struct {
	Configured bool
	Hash       string
	RecordedAt time.Time
}

// RecordServerWebhook writes the server's webhook state (one row).
func (s *Store) RecordServerWebhook(ctx context.Context, w ServerWebhook) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO server_webhook (one, configured, hash, recorded_at) VALUES (true, $1, $2, $3)
	    ON CONFLICT (one) DO UPDATE SET configured = $1, hash = $2, recorded_at = $3`, w.Configured, w.Hash, ms(w.RecordedAt))
	if err != nil {
		return fmt.Errorf("store: record server webhook: %w", translate(err))
	}
	return nil
}

// ReadServerWebhook returns the recorded state; ok is false when no server
// has recorded one yet.
func (s *Store) ReadServerWebhook(ctx context.Context) (w ServerWebhook, ok bool, err error) {
	var at int64
	err = s.pool.QueryRow(ctx, `SELECT configured, hash, recorded_at FROM server_webhook`).Scan(&w.Configured, &w.Hash, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return ServerWebhook{}, false, nil
	}
	if err != nil {
		return ServerWebhook{}, false, fmt.Errorf("store: read server webhook: %w", translate(err))
	}
	w.RecordedAt = msTime(at)
	return w, true, nil
}
