package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// IdempotencyTTL is how long a write's Idempotency-Key is remembered.
const IdempotencyTTL = 24 * time.Hour

// Replay is what an earlier request with the same Idempotency-Key left.
type Replay struct {
	RequestHash []byte
	Status      int // 0: the first request is still running
	Response    []byte
}

// ErrKeyTaken is ClaimIdempotencyKey's answer when the key is already held:
// the caller reads the Replay it returns alongside.
var ErrKeyTaken = errors.New("idempotency key already used")

// claimKeySQL takes the key for a new request, or (when a row exists) does
// nothing. A row older than the TTL is taken over: it counts as absent.
const claimKeySQL = `
INSERT INTO api_idempotency (reader_id, key, request_hash, created_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT (reader_id, key) DO UPDATE
   SET request_hash = excluded.request_hash, status = 0, response = '', created_at = excluded.created_at
 WHERE api_idempotency.created_at < $5
RETURNING 1`

const readKeySQL = `SELECT request_hash, status, response FROM api_idempotency WHERE reader_id = $1 AND key = $2`

// ClaimIdempotencyKey takes key for the Reader's new request. When the key is
// already held (within the TTL) it returns ErrKeyTaken and what the earlier
// request left, which the caller compares and replays.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, readerID, key string, requestHash []byte, now time.Time) (Replay, error) {
	var one int
	err := s.pool.QueryRow(ctx, claimKeySQL, readerID, key, requestHash, instant(now), instant(now.Add(-IdempotencyTTL))).Scan(&one)
	if err == nil {
		return Replay{}, nil
	}
	if err = translate(err); !errors.Is(err, ErrNotFound) {
		return Replay{}, fmt.Errorf("store: claim idempotency key: %w", err)
	}
	var r Replay
	if err := s.pool.QueryRow(ctx, readKeySQL, readerID, key).Scan(&r.RequestHash, &r.Status, &r.Response); err != nil {
		return Replay{}, fmt.Errorf("store: read idempotency key: %w", translate(err))
	}
	return r, ErrKeyTaken
}

// finishKeySQL stores the first answer and prunes the Reader's expired keys
// (through the (reader_id, created_at) index) in the same statement.
const finishKeySQL = `
WITH pruned AS (
    DELETE FROM api_idempotency WHERE reader_id = $1 AND created_at < $5
)
UPDATE api_idempotency SET status = $3, response = $4 WHERE reader_id = $1 AND key = $2`

// FinishIdempotencyKey records the answer a claimed key's request got, so a
// repeat replays it.
func (s *Store) FinishIdempotencyKey(ctx context.Context, readerID, key string, status int, response []byte, now time.Time) error {
	if _, err := s.pool.Exec(ctx, finishKeySQL, readerID, key, status, response, instant(now.Add(-IdempotencyTTL))); err != nil {
		return fmt.Errorf("store: finish idempotency key: %w", translate(err))
	}
	return nil
}

const releaseKeySQL = `DELETE FROM api_idempotency WHERE reader_id = $1 AND key = $2 AND status = 0`

// ReleaseIdempotencyKey gives a claimed key back when its request failed on
// our side, so a retry with the same key runs rather than replays a failure.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, readerID, key string) error {
	if _, err := s.pool.Exec(ctx, releaseKeySQL, readerID, key); err != nil {
		return fmt.Errorf("store: release idempotency key: %w", translate(err))
	}
	return nil
}
