package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mangabookmark/mangabookmark/word"
)

// This file holds the statements a Poll issues (its Lane's rows are in
// lanes.go, the pass log in passes.go). Each Poll of a healthy,
// unchanged Series costs exactly one write: the check stamp. Every other
// write here fires only on a transition.
//
// Every statement a Lane issues is safe to send twice (the writes are guarded or
// idempotent), so each is retried when it met a session that had already
// ended: after a database restart the pool holds one dead connection per
// slot, and without the retry each would cost a Series a false errors row.

// lostSession reports whether err says the statement reached a session the
// server had already ended (terminated backend, shutdown): it did not run.
func lostSession(err error) bool {
	if pgconn.SafeToRetry(err) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case pgerrcode.AdminShutdown, pgerrcode.CrashShutdown, pgerrcode.CannotConnectNow:
			return true
		}
	}
	return false
}

// Unreachable reports whether err says the database could not be reached at
// all (no connection could be made, or the session died under the
// statement), rather than that the server refused one statement. The Lane
// stops a pass on it: every remaining Series would fail its check stamp the
// same way, each costing a connection attempt and two log lines, and none is
// lost by waiting, since an unstamped Series stays due.
func Unreachable(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || lostSession(err) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pgerrcode.IsConnectionException(pg.Code)
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// Unavailable reports whether err means the database could not do the work
// in time: it is unreachable, it is refusing new sessions, or the caller's
// deadline (or the server's statement_timeout) ran out first. Nothing the
// statement would have written was written. A page answers 503 for it.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	if Unreachable(err) || errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case pgerrcode.QueryCanceled, pgerrcode.TooManyConnections: // statement_timeout, a full server
			return true
		}
	}
	return false
}

// again runs f, and again while it fails on a lost session: at most once per
// pooled connection, plus one.
func (s *Store) again(f func() error) error {
	var err error
	for range int(s.pool.Stat().MaxConns()) + 1 {
		if err = f(); err == nil || !lostSession(err) {
			return err
		}
	}
	return err
}

// exec runs one of the Lane's statements with again.
func (s *Store) exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	var tag pgconn.CommandTag
	err := s.again(func() (err error) {
		tag, err = s.pool.Exec(ctx, sql, args...)
		return err
	})
	return tag, err
}

// dueSeriesSQL picks the Series a pass owes, forced first, then oldest check.
// It never joins poll_failures: a failing Series is due at the same pace as
// any other (CONTEXT.md, Rules: Failing pace).
//
// $2 is the cutoff: max(now - pollEvery, the Lane's unserved Forced Poll).
//
// Each arm of the OR has its partial index (series_due, series_forced), so
// neither a Finished Series nor one without an address is ever read;
// TestThePlans holds the statement to that plan. A never-checked Series
// reads as checked at -infinity (dueKey), before every check, as
// series_due indexes it (migration 0016).
const dueSeriesSQL = `SELECT ` + SeriesColumns + `
FROM series
WHERE site = $1 AND finished_at IS NULL AND url <> ''
  AND (` + dueKey + ` <= $2 OR ` + forcedSQL + `)
ORDER BY (` + forcedSQL + `) IS TRUE DESC, ` + dueKey + `, series_id
LIMIT $3`

// dueKey is the check time the due order reads: -infinity for never, so a
// Series never checked comes before every check.
const dueKey = `coalesce(checked_at, timestamptz '-infinity')`

// forcedSQL: a Forced Poll asked for since the last check (series_forced's
// predicate).
const forcedSQL = `force_poll_at > ` + dueKey

// DueSeries returns the Series of site a pass owes: not Finished, with an
// address, and checked at or before cutoff or forced since their last check.
// limit <= 0 means no limit.
func (s *Store) DueSeries(ctx context.Context, site string, cutoff time.Time, limit int) ([]Series, error) {
	var lim any
	if limit > 0 {
		lim = limit
	}
	var v []Series
	err := s.again(func() (err error) {
		v, err = getMany[Series](ctx, s, dueSeriesSQL, site, instant(cutoff), lim)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: due series %s: %w", site, err)
	}
	return v, nil
}

// nextCheckSQL finds the oldest check among the Series the Lane will owe
// (series_due index; min over an index is one probe): whether there is one,
// and its time, NULL for a Series never checked.
const nextCheckSQL = `
SELECT m IS NOT NULL, CASE WHEN m > timestamptz '-infinity' THEN m END FROM (
    SELECT min(` + dueKey + `) AS m FROM series
    WHERE site = $1 AND finished_at IS NULL AND url <> '') o`

// OldestCheck returns the oldest check among site's pollable Series (the
// zero time for one never checked), and false when it has none. The Lane
// rests until that plus pollEvery.
func (s *Store) OldestCheck(ctx context.Context, site string) (time.Time, bool, error) {
	var oldest time.Time
	var has bool
	err := s.again(func() error { return s.pool.QueryRow(ctx, nextCheckSQL, site).Scan(&has, &oldest) })
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: oldest check %s: %w", site, translate(err))
	}
	return oldest, has, nil
}

// stampSQL is the check stamp, written before the fetch. It is conditional on
// the check the due query saw, so a Series is never polled twice for one
// due reading (two processes, or a Lane that lost its lock mid-pass).
//
// It also reports whether a failure row exists. That is how the ok write
// stays at one statement on the healthy path: the DELETE is issued only
// when this says a row is there. Only the Lane that holds the Series' Site
// writes failure rows, and it is the one asking, so the answer cannot go
// stale between the stamp and the write. The due query stays free of
// poll_failures (CONTEXT.md, Rules: Failing pace). The answer is the row's copy on
// series (migration 0009), kept by poll_failures' own triggers in the same
// transaction as every failure write, so it is exact and costs no probe.
const stampSQL = `
UPDATE series s SET checked_at = $4
WHERE s.site = $1 AND s.series_id = $2 AND s.checked_at IS NOT DISTINCT FROM $3
RETURNING s.failing_since IS NOT NULL`

// ErrAlreadyChecked: the Series' check stamp moved since the due query read
// it; another pass polled it.
var ErrAlreadyChecked = errors.New("already checked")

// StampChecked writes checked_at = now for a Series whose check still reads
// prev, and reports whether it holds a failure row. ErrAlreadyChecked when
// the stamp moved (or the Series is gone).
func (s *Store) StampChecked(ctx context.Context, site, id string, prev, now time.Time) (failing bool, err error) {
	err = s.again(func() error { return s.pool.QueryRow(ctx, stampSQL, site, id, stamp(prev), stamp(now)).Scan(&failing) })
	if errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("store: stamp %s/%s: %w", site, id, ErrAlreadyChecked)
	}
	if err != nil {
		return false, fmt.Errorf("store: stamp %s/%s: %w", site, id, translate(err))
	}
	return failing, nil
}

// recordFailureSQL is the failure write (CONTEXT.md, Rules: Failure write): failing_since is
// never touched by the conflict update, and an identical word writes nothing.
const recordFailureSQL = `
INSERT INTO poll_failures (site, series_id, outcome, failing_since) VALUES ($1,$2,$3,$4)
ON CONFLICT (site, series_id) DO UPDATE SET outcome = excluded.outcome
  WHERE poll_failures.outcome <> excluded.outcome`

// RecordFailure writes the failure row for a failing outcome word.
func (s *Store) RecordFailure(ctx context.Context, site, id string, outcome word.Outcome, now time.Time) error {
	if _, err := s.exec(ctx, recordFailureSQL, site, id, outcome, instant(now)); err != nil {
		return fmt.Errorf("store: record failure %s/%s: %w", site, id, translate(err))
	}
	return nil
}

const clearFailureSQL = `DELETE FROM poll_failures WHERE site = $1 AND series_id = $2`

// Failure is a Series' failure row.
type Failure struct {
	Outcome      word.Outcome `db:"outcome"`
	FailingSince time.Time    `db:"failing_since"`
}

const setSiteCompletedSQL = `UPDATE series SET site_completed_at = $3 WHERE site = $1 AND series_id = $2`

// pollLatestSQL writes the number a Poll read when it is at or above the
// current one: above raises it, equal confirms it; either way a Poll now
// stands behind the number and the Reader attribution goes. The guard is
// repeated in SQL so a Sighting that raised the number since the due query
// is never lowered.
const pollLatestSQL = `
UPDATE series SET latest_chapter_num = $3::text::numeric,
       latest_chapter_url = CASE WHEN $4 = '' THEN latest_chapter_url ELSE $4 END,
       latest_raised_by = NULL
WHERE site = $1 AND series_id = $2
  AND (latest_chapter_num IS NULL OR latest_chapter_num <= $3::text::numeric)`

const setSeriesFaceSQL = `
UPDATE series SET title = $3, cover_url = $4 WHERE site = $1 AND series_id = $2`

// ReadChanges is what one correct read changes about a Series; the zero
// value changes nothing. The poller decides what changed; the store writes
// only that.
type ReadChanges struct {
	// ClearFailure deletes the failure row (the check stamp said one exists).
	ClearFailure bool
	// Completed, when set, writes the completion hint: CompletedAt is the
	// read's time, or the zero time when the Site no longer says completed.
	Completed   bool
	CompletedAt time.Time
	// Latest, when set, records the Latest Chapter the read found (see
	// pollLatestSQL): LatestNum and LatestURL.
	Latest               bool
	LatestNum, LatestURL string
	// Face, when set, refreshes the title and the cover.
	Face         bool
	Title, Cover string
}

// statements lists the writes c needs, in a fixed order.
func (c ReadChanges) statements(site, id string) [][]any {
	var out [][]any
	if c.ClearFailure {
		out = append(out, []any{clearFailureSQL, site, id})
	}
	if c.Completed {
		out = append(out, []any{setSiteCompletedSQL, site, id, stamp(c.CompletedAt)})
	}
	if c.Latest {
		out = append(out, []any{pollLatestSQL, site, id, c.LatestNum, c.LatestURL})
	}
	if c.Face {
		out = append(out, []any{setSeriesFaceSQL, site, id, c.Title, c.Cover})
	}
	return out
}

// ApplyRead writes what a correct read changed: nothing at all for a
// healthy, unchanged Series (its one statement was the check stamp), one
// statement when one thing changed, and a transaction (pgx.BeginFunc) when
// more did, so a read is applied whole or not at all. Every statement is
// safe to send twice, so the whole is retried on a lost session.
func (s *Store) ApplyRead(ctx context.Context, site, id string, c ReadChanges) error {
	stmts := c.statements(site, id)
	var err error
	switch len(stmts) {
	case 0:
		return nil
	case 1:
		_, err = s.exec(ctx, stmts[0][0].(string), stmts[0][1:]...)
	default:
		err = s.again(func() error {
			return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
				for _, st := range stmts {
					if _, err := tx.Exec(ctx, st[0].(string), st[1:]...); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
	if err != nil {
		return fmt.Errorf("store: apply read %s/%s: %w", site, id, translate(err))
	}
	return nil
}
