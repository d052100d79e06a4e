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
	ClaimedAt   time.Time // when the key was claimed, for how long to wait
}

// ErrKeyTaken is ClaimIdempotencyKey's answer when the key is already held:
// the caller reads the Replay it returns alongside.
var ErrKeyTaken = errors.New("idempotency key already used")

// claimKeySQL takes the key for a new request, or (when a row exists) does
// nothing. A row older than the TTL is taken over: it counts as absent. So
// is a claim still in flight (status 0) from before $6 for the same request:
// its request is out of time and can write nothing more, and giving the key
// back failed (the database went away between the claim and the write), so
// the retry runs the write rather than answering 409 for a day. ON CONFLICT
// locks the row and re-reads it before the WHERE, so of two retries racing
// for one abandoned claim the second sees the first's created_at and takes
// nothing: exactly one runs the write.
const claimKeySQL = `
INSERT INTO api_idempotency (reader_id, key, request_hash, created_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT (reader_id, key) DO UPDATE
   SET request_hash = excluded.request_hash, status = 0, response = '', created_at = excluded.created_at
 WHERE api_idempotency.created_at < $5
    OR (api_idempotency.status = 0 AND api_idempotency.created_at < $6
        AND api_idempotency.request_hash = excluded.request_hash)
RETURNING 1`

const readKeySQL = `SELECT request_hash, status, response, created_at FROM api_idempotency WHERE reader_id = $1 AND key = $2`

// ClaimIdempotencyKey takes key for the Reader's new request at now; a claim
// still in flight from before abandonedBefore (the caller's whole time
// budget of a request ago) with the same requestHash is taken over. When the
// key is otherwise held (within the TTL) it returns ErrKeyTaken and what the
// earlier request left, which the caller compares and replays. The claim is
// known by now afterwards: FinishIdempotencyKey and ReleaseIdempotencyKey
// take it, so a request whose claim was taken over changes nothing.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, readerID, key string, requestHash []byte, now, abandonedBefore time.Time) (Replay, error) {
	var one int
	err := s.pool.QueryRow(ctx, claimKeySQL, readerID, key, requestHash, instant(now),
		instant(now.Add(-IdempotencyTTL)), instant(abandonedBefore)).Scan(&one)
	if err == nil {
		return Replay{}, nil
	}
	if err = translate(err); !errors.Is(err, ErrNotFound) {
		return Replay{}, fmt.Errorf("store: claim idempotency key: %w", err)
	}
	var r Replay
	if err := s.pool.QueryRow(ctx, readKeySQL, readerID, key).Scan(&r.RequestHash, &r.Status, &r.Response, &r.ClaimedAt); err != nil {
		return Replay{}, fmt.Errorf("store: read idempotency key: %w", translate(err))
	}
	return r, ErrKeyTaken
}

// finishKeySQL stores the first answer and prunes the Reader's expired keys
// (through the (reader_id, created_at) index) in the same statement. It
// touches only the claim made at $6: a request late past its budget whose
// claim a retry took over must not write its answer over the retry's.
const finishKeySQL = `
WITH pruned AS (
    DELETE FROM api_idempotency WHERE reader_id = $1 AND created_at < $5
)
UPDATE api_idempotency SET status = $3, response = $4 WHERE reader_id = $1 AND key = $2 AND created_at = $6`

// FinishIdempotencyKey records the answer the claim made at claimedAt got,
// so a repeat replays it.
func (s *Store) FinishIdempotencyKey(ctx context.Context, readerID, key string, claimedAt time.Time, status int, response []byte, now time.Time) error {
	if _, err := s.pool.Exec(ctx, finishKeySQL, readerID, key, status, response, instant(now.Add(-IdempotencyTTL)), instant(claimedAt)); err != nil {
		return fmt.Errorf("store: finish idempotency key: %w", translate(err))
	}
	return nil
}

// releaseKeySQL deletes only the claim made at $3, for the reason of
// finishKeySQL: a late release must not free a retry's claim for a third
// request to run the write beside it.
const releaseKeySQL = `DELETE FROM api_idempotency WHERE reader_id = $1 AND key = $2 AND status = 0 AND created_at = $3`

// ReleaseIdempotencyKey gives the claim made at claimedAt back when its
// request failed on our side, so a retry with the same key runs rather than
// replays a failure.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, readerID, key string, claimedAt time.Time) error {
	if _, err := s.pool.Exec(ctx, releaseKeySQL, readerID, key, instant(claimedAt)); err != nil {
		return fmt.Errorf("store: release idempotency key: %w", translate(err))
	}
	return nil
}
