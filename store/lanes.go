package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// This file holds the Lanes' rows (poll_lanes: Forced Poll, Pause, refusal)
// and the Lane lock, the session that leads a Lane and hears its wakes.

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
	return s.execWake(ctx, "force poll "+site+"/"+id, forceSeriesSQL, site, id, stamp(now))
}

var forceLaneSQL = wakeSQL(`UPDATE poll_lanes SET force_poll_at = $2 WHERE site = $1 RETURNING site`)

// ForceLanePoll records a Forced Poll of a whole Lane (every Series checked
// at or before now is due on its next pass) and wakes it.
func (s *Store) ForceLanePoll(ctx context.Context, site string, now time.Time) error {
	return s.execWake(ctx, "force lane "+site, forceLaneSQL, site, stamp(now))
}

var pauseLaneSQL = wakeSQL(`UPDATE poll_lanes SET paused_until = $2, paused_at = $3 WHERE site = $1 RETURNING site`)

// PauseLane stops a Lane until a time: the owner's own act, never a fault.
// asked is when the owner asked, which tells the Lanes page whether a pass
// has honoured this Pause yet (CONTEXT.md, Pause).
func (s *Store) PauseLane(ctx context.Context, site string, until, asked time.Time) error {
	return s.execWake(ctx, "pause lane "+site, pauseLaneSQL, site, stamp(until), stamp(asked))
}

var resumeLaneSQL = wakeSQL(`UPDATE poll_lanes SET paused_until = NULL WHERE site = $1 RETURNING site`)

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
	// The listing state (ADR 0016; zero is NULL): the last listing read the
	// Site answered, the last that named a Series, and since when every read
	// named none (poller/schedule, Broken).
	ListingReadAt     time.Time `db:"listing_read_at"`
	ListingOKAt       time.Time `db:"listing_ok_at"`
	ListingEmptySince time.Time `db:"listing_empty_since"`
}

const laneColumns = `site, paused_until, refuse_until, force_poll_at,
	listing_read_at, listing_ok_at, listing_empty_since`

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
	tag, err := s.exec(ctx, `UPDATE poll_lanes SET refuse_until = $2 WHERE site = $1`, site, stamp(until))
	if err != nil {
		return fmt.Errorf("store: set lane refusal %s: %w", site, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: set lane refusal %s: %w", site, ErrNotFound)
	}
	return nil
}

const serveLaneForceSQL = `UPDATE poll_lanes SET force_poll_at = NULL WHERE site = $1 AND force_poll_at = $2`

// ServeLaneForce marks the Lane's Forced Poll served, unless a newer request
// arrived since the pass read it.
func (s *Store) ServeLaneForce(ctx context.Context, site string, at time.Time) error {
	if _, err := s.exec(ctx, serveLaneForceSQL, site, stamp(at)); err != nil {
		return fmt.Errorf("store: serve lane force %s: %w", site, translate(err))
	}
	return nil
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
