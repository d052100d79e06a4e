package store

import (
	"context"
	"fmt"
	"time"
)

// PushSubscription is one browser a Reader subscribed to Web Push
// (CONTEXT.md, Push subscription): the push service's endpoint and the
// browser's keys, as its PushSubscription.toJSON() gave them.
type PushSubscription struct {
	ReaderID string `db:"reader_id"`
	Endpoint string `db:"endpoint"`
	P256dh   string `db:"p256dh"`
	Auth     string `db:"auth"`
}

// MaxPushSubscriptions is how many browsers one Reader may subscribe: more
// than anyone uses, few enough that one announcement's sends stay bounded.
const MaxPushSubscriptions = 20

// ErrEndpointTaken: another Reader's subscription holds the endpoint. An
// endpoint is one browser's; posting it does not make it the poster's.
var ErrEndpointTaken = fmt.Errorf("%w: push endpoint held by another reader", ErrConflict)

// savePushSQL adds the subscription, or renews the keys of the Reader's own
// row with its endpoint: a browser that subscribes again keeps one row. A
// row of another Reader is left as it is (no row changes). A Reader at the
// cap may still renew one of theirs.
const savePushSQL = `
INSERT INTO push_subscriptions (reader_id, endpoint, p256dh, auth, created_at)
SELECT $1, $2, $3, $4, $5
 WHERE (SELECT count(*) FROM push_subscriptions WHERE reader_id = $1) < $6
    OR EXISTS (SELECT 1 FROM push_subscriptions WHERE endpoint = $2 AND reader_id = $1)
ON CONFLICT (endpoint) DO UPDATE
   SET p256dh = EXCLUDED.p256dh, auth = EXCLUDED.auth, created_at = EXCLUDED.created_at
 WHERE push_subscriptions.reader_id = EXCLUDED.reader_id`

const endpointTakenSQL = `SELECT EXISTS (SELECT 1 FROM push_subscriptions WHERE endpoint = $1 AND reader_id <> $2)`

// SavePushSubscription stores a Reader's browser subscription.
// ErrEndpointTaken: another Reader holds the endpoint. ErrConflict: the
// Reader already has MaxPushSubscriptions others.
func (s *Store) SavePushSubscription(ctx context.Context, sub PushSubscription, now time.Time) error {
	tag, err := s.pool.Exec(ctx, savePushSQL, sub.ReaderID, sub.Endpoint, sub.P256dh, sub.Auth, instant(now), MaxPushSubscriptions)
	if err != nil {
		return fmt.Errorf("store: save push subscription for %s: %w", sub.ReaderID, translate(err))
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	// Nothing was written: say which refusal it was.
	var taken bool
	if err := s.pool.QueryRow(ctx, endpointTakenSQL, sub.Endpoint, sub.ReaderID).Scan(&taken); err != nil {
		return fmt.Errorf("store: save push subscription for %s: %w", sub.ReaderID, translate(err))
	}
	if taken {
		return fmt.Errorf("store: save push subscription for %s: %w", sub.ReaderID, ErrEndpointTaken)
	}
	return fmt.Errorf("store: save push subscription for %s: %w", sub.ReaderID, ErrConflict)
}

const listPushSQL = `SELECT reader_id, endpoint, p256dh, auth FROM push_subscriptions WHERE reader_id = $1 ORDER BY id`

// PushSubscriptions lists a Reader's subscribed browsers, oldest first.
func (s *Store) PushSubscriptions(ctx context.Context, readerID string) ([]PushSubscription, error) {
	v, err := getMany[PushSubscription](ctx, s, listPushSQL, readerID)
	if err != nil {
		return nil, fmt.Errorf("store: list push subscriptions %s: %w", readerID, err)
	}
	return v, nil
}

const deletePushSQL = `DELETE FROM push_subscriptions WHERE endpoint = $1`

// DeletePushSubscription forgets an endpoint the push service said is gone
// (404 or 410). An endpoint already gone is not an error.
func (s *Store) DeletePushSubscription(ctx context.Context, endpoint string) error {
	if _, err := s.pool.Exec(ctx, deletePushSQL, endpoint); err != nil {
		return fmt.Errorf("store: delete push subscription: %w", translate(err))
	}
	return nil
}

const unsubscribePushSQL = `DELETE FROM push_subscriptions WHERE reader_id = $1 AND endpoint = $2`

// UnsubscribePush deletes one of the Reader's own subscriptions (the
// browser that asks). ErrNotFound: the Reader has no such subscription.
func (s *Store) UnsubscribePush(ctx context.Context, readerID, endpoint string) error {
	tag, err := s.pool.Exec(ctx, unsubscribePushSQL, readerID, endpoint)
	if err != nil {
		return fmt.Errorf("store: unsubscribe push %s: %w", readerID, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: unsubscribe push %s: %w", readerID, ErrNotFound)
	}
	return nil
}
