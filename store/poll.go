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

// dueSeriesSQL is the Lane's order (ADR 0016; poller/schedule, Rank): one
// arm per rank, each on its own partial index and cut to the limit, so the
// query reads at most limit rows per arm however large the Lane. The outer
// query keeps each Series once, at its first rank, and orders by rank and
// key. It never joins poll_failures: a failing Series is due at the same
// pace as any other (CONTEXT.md, Rules: Failing pace). Neither a Finished
// Series nor one without an address is ever read; TestThePlans holds the
// statement to its indexes.
//
// $2 now, $3 the floor cutoff (now - POLL_EVERY: the Ahead arm's bound),
// $4 the Lane's unserved Forced Poll (NULL: none), $5 the limit.
var dueSeriesSQL = `
SELECT rank, ` + SeriesColumns + ` FROM (
  SELECT DISTINCT ON (series_id) * FROM (` + dueArms("*") + `
  ) arms ORDER BY series_id, rank, key
) due ORDER BY rank, key, series_id LIMIT $5`

// dueArms is the due query's six arms, one per rank, each selecting rank,
// key and cols, read in its own partial index's order and cut to $5. The
// due query and the due count share them, so the count owes exactly what
// the query would read.
func dueArms(cols string) string {
	return `
    (SELECT 0 AS rank, force_poll_at AS key, ` + cols + ` FROM series
      WHERE site = $1 AND ` + pollable + ` AND ` + forcedSQL + `
      ORDER BY force_poll_at, series_id LIMIT $5)
    UNION ALL
    (SELECT 1, ` + dueKey + `, ` + cols + ` FROM series
      WHERE site = $1 AND ` + pollable + ` AND ` + dueKey + ` <= $4
      ORDER BY ` + dueKey + `, series_id LIMIT $5)
    UNION ALL
    (SELECT 2, sighted_at, ` + cols + ` FROM series
      WHERE site = $1 AND ` + pollable + ` AND ` + sightedSQL + `
      ORDER BY sighted_at, series_id LIMIT $5)
    UNION ALL
    (SELECT 3, listed_at, ` + cols + ` FROM series
      WHERE site = $1 AND ` + pollable + ` AND ` + listedSQL + `
      ORDER BY listed_at, series_id LIMIT $5)
    UNION ALL
    (SELECT 4, ` + nextKey + `, ` + cols + ` FROM series
      WHERE site = $1 AND ` + pollable + ` AND ` + nextKey + ` <= $2
      ORDER BY ` + nextKey + `, series_id LIMIT $5)
    UNION ALL
    (SELECT 5, ` + nextKey + `, ` + cols + ` FROM series
      WHERE site = $1 AND ` + pollable + ` AND bookmark_count > 0 AND ` + dueKey + ` <= $3
      ORDER BY ` + nextKey + `, series_id LIMIT $5)`
}

// DueCap bounds the due count: a pass that owes more records DueCap+1,
// "more than DueCap", as every capped figure reads (FigureCap).
const DueCap = FigureCap

// countDueSQL is how many Series the Lane owes a read now (the pass log's
// due, CONTEXT.md: Pass), exact up to $5 − 1 and $5 above: each arm reads at
// most $5 index entries, so while every arm holds fewer all are counted,
// and once one holds $5 the union does too. At most six times $5 entries,
// however large the Lane; TestThePlans holds it to the arms' indexes.
var countDueSQL = `SELECT least(count(DISTINCT series_id), $5) FROM (` + dueArms("series_id") + `
) arms`

// CountDue returns how many Series of site a Lane owes a read at ask.Now,
// at most DueCap+1 (ask.Limit is ignored): what a pass owed at its start,
// read before it reads any, so a pass cut short still records what it owed.
func (s *Store) CountDue(ctx context.Context, site string, ask DueAsk) (int, error) {
	var force any
	if !ask.LaneForce.IsZero() {
		force = ask.LaneForce
	}
	var n int
	err := s.again(func() error {
		return s.pool.QueryRow(ctx, countDueSQL, site, instant(ask.Now), instant(ask.Now.Add(-ask.Floor)),
			force, DueCap+1).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("store: count due %s: %w", site, translate(err))
	}
	return n, nil
}

// pollable is every due arm's filter, the predicate of each of their
// partial indexes.
const pollable = `finished_at IS NULL AND url <> ''`

// dueKey is the check time the order reads: -infinity for never, so a
// Series never checked comes before every check.
const dueKey = `coalesce(checked_at, timestamptz '-infinity')`

// nextKey is the scheduler's next read time: -infinity for a Series never
// read, which is owed its first read before anything but an urgent one.
const nextKey = `coalesce(next_read_at, timestamptz '-infinity')`

// forcedSQL: a Forced Poll asked for since the last check (series_forced's
// predicate).
const forcedSQL = `force_poll_at > ` + dueKey

// sightedSQL: a Sighting raised Latest Chapter since the last check
// (series_sighted's predicate).
const sightedSQL = `sighted_at > ` + dueKey

// listedSQL: the listing named a chapter above Latest Chapter since the
// last check (series_listed's predicate).
const listedSQL = `listed_at > ` + dueKey

// DueAsk is what a Lane asks the due query.
type DueAsk struct {
	Now time.Time
	// Floor is POLL_EVERY: a Series read more recently is read again only
	// when something urgent, or its own next read time, asks.
	Floor time.Duration
	// LaneForce is the Lane's unserved Forced Poll (zero: none): every
	// Series checked at or before it is owed a read.
	LaneForce time.Time
	// Limit bounds the answer (at least 1).
	Limit int
}

// Due is a Series the Lane owes a read, with the rank that made it due.
type Due struct {
	Rank int `db:"rank"`
	Series
}

// DueSeries returns the Series of site a Lane owes a read, in the order it
// reads them (poller/schedule, Rank): at most ask.Limit of them.
func (s *Store) DueSeries(ctx context.Context, site string, ask DueAsk) ([]Due, error) {
	var force any
	if !ask.LaneForce.IsZero() {
		force = ask.LaneForce
	}
	var v []Due
	err := s.again(func() (err error) {
		v, err = getMany[Due](ctx, s, dueSeriesSQL, site, instant(ask.Now),
			instant(ask.Now.Add(-ask.Floor)), force, max(ask.Limit, 1))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: due series %s: %w", site, err)
	}
	return v, nil
}

// nextDueSQL is when the Lane next owes a read that nothing urgent asks
// for: the earliest next read time (series_next), or the earliest a
// bookmarked Series passes the floor (series_ahead_checked); each is one
// index probe. NULL when the Lane has nothing to read.
const nextDueSQL = `
SELECT least(
  (SELECT min(` + nextKey + `) FROM series WHERE site = $1 AND ` + pollable + `),
  (SELECT min(` + dueKey + `) + $2 * interval '1 second' FROM series
    WHERE site = $1 AND ` + pollable + ` AND bookmark_count > 0))`

// NextDue returns when site's Lane next owes a read by the schedule (the
// zero time for at once), and false when it has no Series to read.
func (s *Store) NextDue(ctx context.Context, site string, floor time.Duration) (time.Time, bool, error) {
	var at *time.Time
	err := s.again(func() error { return s.pool.QueryRow(ctx, nextDueSQL, site, floor.Seconds()).Scan(&at) })
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: next due %s: %w", site, translate(err))
	}
	if at == nil {
		return time.Time{}, false, nil
	}
	return *at, true, nil
}

// nextCheckSQL finds the oldest check among the Series the Lane will owe
// (series_due index; min over an index is one probe): whether there is one,
// and its time, NULL for a Series never checked.
const nextCheckSQL = `
SELECT m IS NOT NULL, CASE WHEN m > timestamptz '-infinity' THEN m END FROM (
    SELECT min(` + dueKey + `) AS m FROM series
    WHERE site = $1 AND ` + pollable + `) o`

// OldestCheck returns the oldest check among site's pollable Series (the
// zero time for one never checked), and false when it has none: the age
// of the least recently read Series.
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
UPDATE series s SET checked_at = $4, next_read_at = $5
WHERE s.site = $1 AND s.series_id = $2 AND s.checked_at IS NOT DISTINCT FROM $3
RETURNING s.failing_since IS NOT NULL`

// ErrAlreadyChecked: the Series' check stamp moved since the due query read
// it; another pass polled it.
var ErrAlreadyChecked = errors.New("already checked")

// StampChecked writes checked_at = now and the scheduler's next read time
// for a Series whose check still reads prev, and reports whether it holds a
// failure row. ErrAlreadyChecked when the stamp moved (or the Series is
// gone). The next read time rides on the stamp so that a healthy,
// unchanged Poll stays one statement (ADR 0016).
func (s *Store) StampChecked(ctx context.Context, site, id string, prev, now, next time.Time) (failing bool, err error) {
	err = s.again(func() error {
		return s.pool.QueryRow(ctx, stampSQL, site, id, stamp(prev), stamp(now), stamp(next)).Scan(&failing)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("store: stamp %s/%s: %w", site, id, ErrAlreadyChecked)
	}
	if err != nil {
		return false, fmt.Errorf("store: stamp %s/%s: %w", site, id, translate(err))
	}
	return failing, nil
}

// unstampSQL takes back a check stamp whose read never finished: the
// Series reads as it did before the stamp, so a Forced Poll, a Sighting or
// a listing mark that made it due is still pending (CONTEXT.md, Forced
// Poll). Conditional on the stamp being ours, so a later pass's stamp is
// never undone.
const unstampSQL = `
UPDATE series SET checked_at = $4, next_read_at = $5
WHERE site = $1 AND series_id = $2 AND checked_at = $3`

// UnstampChecked undoes StampChecked(prev, now, ...) for a read our own
// shutdown cut short: checked_at goes back to prev and next_read_at to
// prevNext, unless the stamp moved since.
func (s *Store) UnstampChecked(ctx context.Context, site, id string, now, prev, prevNext time.Time) error {
	if _, err := s.exec(ctx, unstampSQL, site, id, stamp(now), stamp(prev), stamp(prevNext)); err != nil {
		return fmt.Errorf("store: unstamp %s/%s: %w", site, id, translate(err))
	}
	return nil
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
// stands behind the number and the Reader attribution goes, and the number
// the page showed is remembered (polled_chapter_num, never lowered: the
// owner's Correction may have put Latest Chapter below it). The guard is
// repeated in SQL so a Sighting that raised the number since the due query
// is never lowered.
const pollLatestSQL = `
UPDATE series SET latest_chapter_num = $3::text::numeric,
       latest_chapter_url = CASE WHEN $4 = '' THEN latest_chapter_url ELSE $4 END,
       latest_raised_by = NULL, polled_chapter_num = greatest(polled_chapter_num, $3::text::numeric)
WHERE site = $1 AND series_id = $2
  AND (latest_chapter_num IS NULL OR latest_chapter_num <= $3::text::numeric)`

// pollArrivalSQL is pollLatestSQL for a read that found a new chapter (a
// number above the last one a Poll stood behind): the same guarded write,
// which also learns the Series' cadence and next read time, and records the
// Arrival in one statement (CONTEXT.md, Arrival). No row is recorded when the
// guard held the write back.
const pollArrivalSQL = `
WITH u AS (
  UPDATE series SET latest_chapter_num = $3::text::numeric,
         latest_chapter_url = CASE WHEN $4 = '' THEN latest_chapter_url ELSE $4 END,
         latest_raised_by = NULL, polled_chapter_num = greatest(polled_chapter_num, $3::text::numeric),
         chapter_arrived_at = $5, cadence_s = $8, next_read_at = $9
  WHERE site = $1 AND series_id = $2
    AND (latest_chapter_num IS NULL OR latest_chapter_num <= $3::text::numeric)
  RETURNING site, series_id, latest_chapter_url)
INSERT INTO chapter_arrivals (site, series_id, chapter_num, chapter_url, confirmed_at, noticed_at, listed)
SELECT site, series_id, $3::text::numeric, latest_chapter_url, $5, $6, $7 FROM u`

// pollSeenSQL remembers a read number that changes no Latest Chapter (it is
// below a Reader's raised number, or below the owner's Correction) but is
// above every number the page showed before: the Sighting bound's base
// moves up with the Site (CONTEXT.md, Sighting).
const pollSeenSQL = `
UPDATE series SET polled_chapter_num = $3::text::numeric
WHERE site = $1 AND series_id = $2
  AND (polled_chapter_num IS NULL OR polled_chapter_num < $3::text::numeric)`

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
	// Seen, without Latest, records SeenNum as the highest number the page
	// has shown (pollSeenSQL).
	Seen    bool
	SeenNum string
	// Arrival, with Latest, says the number is a new chapter: it is
	// recorded, and the Series' schedule learns from it.
	Arrival *Arrival
	// Face, when set, refreshes the title and the cover.
	Face         bool
	Title, Cover string
}

// Arrival is a new chapter a Poll confirmed (CONTEXT.md, Arrival).
type Arrival struct {
	// At is the read's time; NoticedAt the first evidence of the chapter:
	// the listing or a Sighting naming it, else the read before this one.
	At, NoticedAt time.Time
	// Listed says the listing named it first.
	Listed bool
	// Cadence (zero: still unknown) and Next are the schedule the arrival
	// teaches: poller/schedule's Learn and Next.
	Cadence time.Duration
	Next    time.Time
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
	switch {
	case c.Latest && c.Arrival != nil:
		a := c.Arrival
		var cadence any
		if a.Cadence >= time.Second {
			cadence = int(a.Cadence / time.Second)
		}
		out = append(out, []any{pollArrivalSQL, site, id, c.LatestNum, c.LatestURL,
			instant(a.At), instant(a.NoticedAt), a.Listed, cadence, stamp(a.Next)})
	case c.Latest:
		out = append(out, []any{pollLatestSQL, site, id, c.LatestNum, c.LatestURL})
	case c.Seen:
		out = append(out, []any{pollSeenSQL, site, id, c.SeenNum})
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
