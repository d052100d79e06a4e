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
//
// BrowserSites are the Sites the server reads through the browser sidecar
// (migration 0012), which the notice conditions depend on; BrowserKnown is
// false when the row was recorded by a server older than that column.
//
// PublicBaseURL is the address the server serves (migration 0022), which
// the link command prints its link on; "" when a server older than that
// column recorded the row.
type ServerWebhook struct {
	Configured    bool
	Hash          string
	RecordedAt    time.Time
	BrowserSites  []string
	BrowserKnown  bool
	PublicBaseURL string
}

// RecordServerWebhook writes the server's webhook state (one row).
func (s *Store) RecordServerWebhook(ctx context.Context, w ServerWebhook) error {
	sites := w.BrowserSites
	if sites == nil {
		sites = []string{} // none, which NULL (unknown) is not
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO server_webhook (one, configured, hash, recorded_at, browser_sites, public_base_url)
	    VALUES (true, $1, $2, $3, $4, NULLIF($5, ''))
	    ON CONFLICT (one) DO UPDATE SET configured = $1, hash = $2, recorded_at = $3, browser_sites = $4, public_base_url = NULLIF($5, '')`,
		w.Configured, w.Hash, instant(w.RecordedAt), sites, w.PublicBaseURL)
	if err != nil {
		return fmt.Errorf("store: record server webhook: %w", translate(err))
	}
	return nil
}

// ReadServerWebhook returns the recorded state; ok is false when no server
// has recorded one yet.
func (s *Store) ReadServerWebhook(ctx context.Context) (w ServerWebhook, ok bool, err error) {
	err = s.pool.QueryRow(ctx, `SELECT configured, hash, recorded_at, browser_sites, coalesce(public_base_url, '') FROM server_webhook`).
		Scan(&w.Configured, &w.Hash, &w.RecordedAt, &w.BrowserSites, &w.PublicBaseURL)
	if errors.Is(err, pgx.ErrNoRows) {
		return ServerWebhook{}, false, nil
	}
	if err != nil {
		return ServerWebhook{}, false, fmt.Errorf("store: read server webhook: %w", translate(err))
	}
	w.BrowserKnown = w.BrowserSites != nil
	return w, true, nil
}
