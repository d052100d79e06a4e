package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mangabookmark/mangabookmark/word"
)

// This file holds the statements a Lane issues. Each Poll of a healthy,
// unchanged Series costs exactly one write: the check stamp. Every other
// write here fires only on a transition.
//
// Every statement here is safe to send twice (the writes are guarded or
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
// TestThePlans holds the statement to that plan.
const dueSeriesSQL = `SELECT ` + SeriesColumns + `
FROM series
WHERE site = $1 AND finished_at = 0 AND url <> ''
  AND (checked_at <= $2 OR force_poll_at > checked_at)
ORDER BY (force_poll_at > checked_at) DESC, checked_at, series_id
LIMIT $3`

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
		v, err = getMany[Series](ctx, s, dueSeriesSQL, site, ms(cutoff), lim)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: due series %s: %w", site, err)
	}
	return v, nil
}

// nextCheckSQL finds the oldest check among the Series the Lane will owe
// (series_due index; min over an index is one probe).
const nextCheckSQL = `
SELECT coalesce(min(checked_at), -1) FROM series
WHERE site = $1 AND finished_at = 0 AND url <> ''`

// OldestCheck returns the oldest check among site's pollable Series (the
// zero time for one never checked), and false when it has none. The Lane
// rests until that plus pollEvery.
func (s *Store) OldestCheck(ctx context.Context, site string) (time.Time, bool, error) {
	var v int64
	err := s.again(func() error { return s.pool.QueryRow(ctx, nextCheckSQL, site).Scan(&v) })
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: oldest check %s: %w", site, translate(err))
	}
	return msTime(max(v, 0)), v >= 0, nil
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
WHERE s.site = $1 AND s.series_id = $2 AND s.checked_at = $3
RETURNING s.failing_since > 0`

// ErrAlreadyChecked: the Series' check stamp moved since the due query read
// it; another pass polled it.
var ErrAlreadyChecked = errors.New("already checked")

// StampChecked writes checked_at = now for a Series whose check still reads
// prev, and reports whether it holds a failure row. ErrAlreadyChecked when
// the stamp moved (or the Series is gone).
func (s *Store) StampChecked(ctx context.Context, site, id string, prev, now time.Time) (failing bool, err error) {
	err = s.again(func() error { return s.pool.QueryRow(ctx, stampSQL, site, id, ms(prev), ms(now)).Scan(&failing) })
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
	if _, err := s.exec(ctx, recordFailureSQL, site, id, outcome, ms(now)); err != nil {
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
		out = append(out, []any{setSiteCompletedSQL, site, id, ms(c.CompletedAt)})
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

// LaneWakeChannel is the LISTEN channel a Lane's leader waits on; the
// payload is the Site. The owner's controls notify it in the same statement
// that records the request, so the Lane wakes at once in whichever process
// holds it, whoever wrote the request.
const LaneWakeChannel = "mangabookmark_lane_wake"

// wakeSQL wraps an UPDATE ... RETURNING site so that each updated row
// notifies its Lane; no row, no notification (and ErrNotFound).
func wakeSQL(update string) string {
	return `WITH u AS (` + update + `)
SELECT 1 FROM u, LATERAL (SELECT pg_notify('` + LaneWakeChannel + `', u.site)) n`
}

func (s *Store) execWake(ctx context.Context, what, sql string, args ...any) error {
	var one int
	if err := s.pool.QueryRow(ctx, sql, args...).Scan(&one); err != nil {
		return fmt.Errorf("store: %s: %w", what, translate(err))
	}
	return nil
}

var forceSeriesSQL = wakeSQL(`UPDATE series SET force_poll_at = $3 WHERE site = $1 AND series_id = $2 RETURNING site`)

// ForceSeriesPoll records a Forced Poll request for one Series and wakes its
// Lane. The request clears nothing: it only makes the Series due.
func (s *Store) ForceSeriesPoll(ctx context.Context, site, id string, now time.Time) error {
	return s.execWake(ctx, "force poll "+site+"/"+id, forceSeriesSQL, site, id, ms(now))
}

var forceLaneSQL = wakeSQL(`UPDATE poll_lanes SET force_poll_at = $2 WHERE site = $1 RETURNING site`)

// ForceLanePoll records a Forced Poll of a whole Lane (every Series checked
// at or before now is due on its next pass) and wakes it.
func (s *Store) ForceLanePoll(ctx context.Context, site string, now time.Time) error {
	return s.execWake(ctx, "force lane "+site, forceLaneSQL, site, ms(now))
}

var pauseLaneSQL = wakeSQL(`UPDATE poll_lanes SET paused_until = $2, paused_at = $3 WHERE site = $1 RETURNING site`)

// PauseLane stops a Lane until a time: the owner's own act, never a fault.
// asked is when the owner asked, which tells the Lanes page whether a pass
// has honoured this Pause yet (CONTEXT.md, Pause).
func (s *Store) PauseLane(ctx context.Context, site string, until, asked time.Time) error {
	return s.execWake(ctx, "pause lane "+site, pauseLaneSQL, site, ms(until), ms(asked))
}

var resumeLaneSQL = wakeSQL(`UPDATE poll_lanes SET paused_until = 0 WHERE site = $1 RETURNING site`)

// ResumeLane ends a Pause and wakes the Lane.
func (s *Store) ResumeLane(ctx context.Context, site string) error {
	return s.execWake(ctx, "resume lane "+site, resumeLaneSQL, site)
}

// Lane is one Site's poll_lanes row.
type Lane struct {
	Site        string    `db:"site"`
	PausedUntil time.Time `db:"paused_until"`
	RefuseUntil time.Time `db:"refuse_until"`
	ForcePollAt time.Time `db:"force_poll_at"`
}

const laneColumns = `site, paused_until, refuse_until, force_poll_at`

const getLaneSQL = `SELECT ` + laneColumns + ` FROM poll_lanes WHERE site = $1`

// GetLane returns one Lane row, or ErrNotFound for an unknown Site.
func (s *Store) GetLane(ctx context.Context, site string) (Lane, error) {
	var v Lane
	err := s.again(func() (err error) {
		v, err = getOne[Lane](ctx, s, getLaneSQL, site)
		return err
	})
	if err != nil {
		return Lane{}, fmt.Errorf("store: get lane %s: %w", site, err)
	}
	return v, nil
}

// SetLaneRefusal records that the Site refused until the given time.
func (s *Store) SetLaneRefusal(ctx context.Context, site string, until time.Time) error {
	tag, err := s.exec(ctx, `UPDATE poll_lanes SET refuse_until = $2 WHERE site = $1`, site, ms(until))
	if err != nil {
		return fmt.Errorf("store: set lane refusal %s: %w", site, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: set lane refusal %s: %w", site, ErrNotFound)
	}
	return nil
}

const serveLaneForceSQL = `UPDATE poll_lanes SET force_poll_at = 0 WHERE site = $1 AND force_poll_at = $2`

// ServeLaneForce marks the Lane's Forced Poll served, unless a newer request
// arrived since the pass read it.
func (s *Store) ServeLaneForce(ctx context.Context, site string, at time.Time) error {
	if _, err := s.exec(ctx, serveLaneForceSQL, site, ms(at)); err != nil {
		return fmt.Errorf("store: serve lane force %s: %w", site, translate(err))
	}
	return nil
}

// PassRow is one row of the pass log.
type PassRow struct {
	ID         int64     `db:"id"`
	Site       string    `db:"site"`
	StartedAt  time.Time `db:"started_at"`
	FinishedAt time.Time `db:"finished_at"`
	Due        int       `db:"due"`
	Checked    int       `db:"checked"`
	Skip       word.Skip `db:"skip"`
	// Counts holds one count per Outcome, one column each.
	word.Counts
}

var insertPassSQL = `
INSERT INTO poll_passes (site, started_at, finished_at, due, checked, skip, ` + outcomeColumns("") + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`

// InsertPass writes one pass-log row.
func (s *Store) InsertPass(ctx context.Context, r PassRow) error {
	args := []any{r.Site, ms(r.StartedAt), ms(r.FinishedAt), r.Due, r.Checked, r.Skip}
	for _, o := range word.Outcomes {
		args = append(args, r.Of(o))
	}
	_, err := s.exec(ctx, insertPassSQL, args...)
	if err != nil {
		return fmt.Errorf("store: insert pass %s: %w", r.Site, translate(err))
	}
	return nil
}

var listPassesSQL = `
SELECT id, site, started_at, finished_at, due, checked, skip, ` + outcomeColumns("") + `
FROM poll_passes WHERE site = $1 AND started_at >= $2 ORDER BY started_at, id`

// ListPasses returns site's pass-log rows started at or after since, oldest first.
func (s *Store) ListPasses(ctx context.Context, site string, since time.Time) ([]PassRow, error) {
	v, err := getMany[PassRow](ctx, s, listPassesSQL, site, ms(since))
	if err != nil {
		return nil, fmt.Errorf("store: list passes %s: %w", site, err)
	}
	return v, nil
}

// prunePassesSQL walks the (site, started_at) index: it touches only the
// rows it deletes, never the whole table.
const prunePassesSQL = `DELETE FROM poll_passes WHERE site = $1 AND started_at < $2`

// PrunePasses deletes site's pass-log rows started before before.
func (s *Store) PrunePasses(ctx context.Context, site string, before time.Time) (int64, error) {
	tag, err := s.exec(ctx, prunePassesSQL, site, ms(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune passes %s: %w", site, translate(err))
	}
	return tag.RowsAffected(), nil
}

// LaneLock is one Site's session advisory lock, held on a connection of its
// own (not a pooled one: a pooled connection returned to the pool would carry
// the lock with it, and six held connections would starve a small pool).
// The lock dies with the session, so a process that dies hands its Lanes
// over as soon as PostgreSQL notices the connection is gone.
//
// The same session LISTENs on LaneWakeChannel, so the leader is the one
// woken by a Forced Poll, a Pause or a Resume written by any process.
type LaneLock struct {
	site  string
	mu    sync.Mutex // a pgx.Conn is not safe for concurrent use
	conn  *pgx.Conn
	store *Store
	// pid and started name the lock session's backend, so Release can make
	// sure it is gone even when the session broke under us.
	pid     uint32
	started time.Time
}

// laneLockSQL keys the lock on (hash of a fixed namespace, hash of the
// Site). Advisory locks are per database, so two deployments sharing a
// server do not collide.
const laneLockSQL = `SELECT pg_try_advisory_lock(hashtext('mangabookmark.lane'), hashtext($1))`

const laneUnlockSQL = `SELECT pg_advisory_unlock(hashtext('mangabookmark.lane'), hashtext($1))`

const laneKeepaliveSQL = `SELECT set_config('tcp_keepalives_idle', '30', false),
	set_config('tcp_keepalives_interval', '10', false), set_config('tcp_keepalives_count', '3', false)`

// TryLockLane takes site's Lane lock without waiting. It returns nil and no
// error when another session holds it.
func (s *Store) TryLockLane(ctx context.Context, site string) (*LaneLock, error) {
	cfg := s.pool.Config().ConnConfig.Copy()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: lock lane %s: connect: %w", site, redactConnErr(err))
	}
	// Server-side keepalives bound how long a vanished holder (a host that
	// died without closing its socket) keeps the lock: about a minute,
	// where the operating system's default is hours. No-ops on a socket.
	if _, err := conn.Exec(ctx, laneKeepaliveSQL); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("store: lock lane %s: keepalive: %w", site, translate(err))
	}
	var got bool
	if err := conn.QueryRow(ctx, laneLockSQL, site).Scan(&got); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("store: lock lane %s: %w", site, translate(err))
	}
	if !got {
		conn.Close(context.Background())
		return nil, nil
	}
	if _, err := conn.Exec(ctx, `LISTEN `+LaneWakeChannel); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("store: lock lane %s: listen: %w", site, translate(err))
	}
	var started time.Time
	if err := conn.QueryRow(ctx, `SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()`).Scan(&started); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("store: lock lane %s: %w", site, translate(err))
	}
	return &LaneLock{site: site, conn: conn, store: s, pid: conn.PgConn().PID(), started: started}, nil
}

// WaitWake blocks until a wake for this Lane's Site arrives (nil), ctx ends
// (ctx's error), or the session fails (another error). Wakes for other
// Sites are skipped. A wake sent while the Lane was busy is kept by the
// session and returned at once.
func (l *LaneLock) WaitWake(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		n, err := l.conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("store: lane wake %s: %w", l.site, err)
		}
		if n != nil && n.Payload == l.site {
			return nil
		}
	}
}

// Alive reports whether the session holding the lock still answers. A dead
// session means the lock is gone (another process may hold it by now).
func (l *LaneLock) Alive(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := l.conn.Ping(ctx); err != nil {
		return fmt.Errorf("store: lane lock lost: %w", err)
	}
	return nil
}

// Release ends the session, which releases the lock.
func (l *LaneLock) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Unlock before closing: closing only asks the backend to exit, and it
	// holds the lock until it has, so another session could still find the
	// Lane taken right after Release returned.
	_, err := l.conn.Exec(ctx, laneUnlockSQL, l.site)
	_ = l.conn.Close(ctx)
	if err != nil {
		// The session broke under us (a wait cut short, a lost socket): its
		// backend may still be holding the lock. End it and wait for it, so
		// the Lane is free when Release returns. Nothing to do if the
		// database is away: the server frees the lock with the session.
		_, _ = l.store.pool.Exec(ctx, laneTerminateSQL, int64(l.pid), l.started)
	}
}

// laneTerminateSQL ends a lock session's backend and waits (up to 5 s) for
// it to exit; matching backend_start too means a reused pid is never hit.
const laneTerminateSQL = `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
WHERE pid = $1 AND backend_start = $2`

// outcomeColumns lists the pass log's count columns, one per Outcome, in
// word.Outcomes order, qualified by alias ("" for none).
func outcomeColumns(alias string) string {
	cols := make([]string, len(word.Outcomes))
	for i, o := range word.Outcomes {
		cols[i] = o.Column(alias)
	}
	return strings.Join(cols, ", ")
}

// outcomeSums sums each count column over the rows of alias, named as the
// column.
func outcomeSums(alias string) string {
	cols := make([]string, len(word.Outcomes))
	for i, o := range word.Outcomes {
		cols[i] = "coalesce(sum(" + o.Column(alias) + "), 0)::bigint AS " + o.Column("")
	}
	return strings.Join(cols, ", ")
}
