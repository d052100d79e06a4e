package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/word"
)

// This file holds the Lanes' rows (poll_lanes: Forced Poll, Pause, refusal)
// and the Lane lock: the lease that says who leads a Lane (ADR 0018), and
// the session on which the leader hears its wakes.

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
	ListingAttempt
}

// ListingAttempt is the Lane's last listing attempt as recorded
// (RecordListing; migration 0034): when, its first page's outcome word ("" and
// the zero time before the first), the rows it read and the Series it
// marked, and since when every attempt has failed (zero: the last one read
// the listing, or none failed yet).
type ListingAttempt struct {
	TriedAt      time.Time    `db:"listing_tried_at"`
	Outcome      word.Outcome `db:"listing_outcome"`
	Entries      int          `db:"listing_entries"`
	Marked       int          `db:"listing_marked"`
	FailingSince time.Time    `db:"listing_failing_since"`
}

const laneColumns = `site, paused_until, refuse_until, force_poll_at,
	listing_read_at, listing_ok_at, listing_empty_since,
	listing_tried_at, listing_outcome, listing_entries, listing_marked, listing_failing_since`

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

const serveSeriesForceSQL = `UPDATE series SET force_poll_at = NULL
WHERE site = $1 AND series_id = $2 AND force_poll_at = $3`

// ServeSeriesForce marks a Series' Forced Poll served once a read of it has
// finished and its outcome is written, unless a newer request arrived since
// the pass read it (CONTEXT.md, Forced Poll). The check stamp alone is no
// answer: it is written as the read starts.
func (s *Store) ServeSeriesForce(ctx context.Context, site, id string, at time.Time) error {
	if _, err := s.exec(ctx, serveSeriesForceSQL, site, id, stamp(at)); err != nil {
		return fmt.Errorf("store: serve force %s/%s: %w", site, id, translate(err))
	}
	return nil
}

// LaneLock is one Site's Lane leadership: a lease row (lane_leases, ADR
// 0018) that names this process's holder until it expires, renewed in the
// background while the lock lives, and a session of its own (not a pooled
// one) that LISTENs on LaneWakeChannel, so the leader is the one woken by a
// Forced Poll, a Pause or a Resume written by any process.
//
// Leadership belongs to the holder, not to a session: a session that dies
// (a database restart, a network cut the database never noticed) costs the
// holder nothing, and it takes its Lane back at once with a new session; a
// holder that vanishes (a host suspended, a process killed) stops renewing,
// and the Lane is free to any other process at the lease's expiry.
type LaneLock struct {
	site  string
	ask   LeaseAsk
	store *Store

	mu   sync.Mutex // a pgx.Conn is not safe for concurrent use
	conn *pgx.Conn  // the wake session; nil between a lost session and Rewake
	// pid and started name the wake session's backend, so Release can make
	// sure it is gone even when the session broke under us.
	pid     uint32
	started time.Time

	// lost is closed when a renewal found the lease held by another holder;
	// stop ends the renewer (Release).
	lost     chan struct{}
	lostOnce sync.Once
	stop     context.CancelFunc
	renewed  sync.WaitGroup
}

// LeaseAsk is how a process asks for a Lane's lease.
type LeaseAsk struct {
	// Holder names the process, uniquely: a process taking its own lease
	// back gets it at once.
	Holder string
	// TTL is how long the lease lasts unrenewed; the lock renews it every
	// third of that.
	TTL time.Duration
	// Pace is the holder's pace for the Lane, kept with the lease so the
	// Lanes page can tell a Lane nobody has led for longer than it.
	Pace time.Duration
}

// ErrLaneLost: the Lane's lease is held by another holder now.
var ErrLaneLost = errors.New("lane lease held by another process")

// laneClaimSQL takes or renews site's lease for holder ($2) for $3
// milliseconds, by the database's clock (one clock for every replica):
// the row is taken when it is absent, already this holder's, or expired.
// It answers whether the lease is held, and how many seconds the lease it
// found has left (what a Lane that is not leader waits before asking
// again). The outer SELECT reads the row as it was before the claim.
const laneClaimSQL = `
WITH c AS (
  INSERT INTO lane_leases (site, holder, expires_at, pace_s)
  VALUES ($1, $2, now() + $3 * interval '1 millisecond', $4)
  ON CONFLICT (site) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at, pace_s = excluded.pace_s
  WHERE lane_leases.holder = excluded.holder OR lane_leases.expires_at <= now()
  RETURNING 1)
SELECT EXISTS (SELECT FROM c),
  coalesce((SELECT extract(epoch FROM expires_at - now()) FROM lane_leases WHERE site = $1), 0)::float8`

// laneReleaseSQL ends a lease at once; the row stays, so when nobody has
// led the Lane since stays readable.
const laneReleaseSQL = `UPDATE lane_leases SET expires_at = now() WHERE site = $1 AND holder = $2 AND expires_at > now()`

const laneKeepaliveSQL = `SELECT set_config('tcp_keepalives_idle', '30', false),
	set_config('tcp_keepalives_interval', '10', false), set_config('tcp_keepalives_count', '3', false)`

// claimLane runs laneClaimSQL.
func (s *Store) claimLane(ctx context.Context, site string, ask LeaseAsk) (held bool, left time.Duration, err error) {
	var secs float64
	err = s.again(func() error {
		return s.pool.QueryRow(ctx, laneClaimSQL, site, ask.Holder, ask.TTL.Milliseconds(),
			int64(ask.Pace/time.Second)).Scan(&held, &secs)
	})
	if err != nil {
		return false, 0, fmt.Errorf("store: claim lane %s: %w", site, translate(err))
	}
	return held, time.Duration(secs * float64(time.Second)), nil
}

// TryLockLane takes site's Lane lease as ask says, without waiting, and
// opens its wake session. It returns a nil lock and no error when another
// holder's lease has not expired, with the time that lease has left.
func (s *Store) TryLockLane(ctx context.Context, site string, ask LeaseAsk) (*LaneLock, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	held, left, err := s.claimLane(ctx, site, ask)
	if err != nil || !held {
		return nil, left, err
	}
	l := &LaneLock{site: site, ask: ask, store: s, lost: make(chan struct{})}
	if err := l.connect(ctx); err != nil {
		_, _ = s.pool.Exec(ctx, laneReleaseSQL, site, ask.Holder)
		return nil, 0, err
	}
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	l.stop = stop
	l.renewed.Go(func() { l.renew(rctx) })
	return l, 0, nil
}

// connect opens the wake session. The caller holds l.mu or owns l alone.
func (l *LaneLock) connect(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.store.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("store: lane wake session %s: connect: %w", l.site, redactConnErr(err))
	}
	// Server-side keepalives end a session whose client vanished within
	// about a minute; no-ops on a socket. The lease, not this session, is
	// what leadership hangs on (ADR 0018).
	var started time.Time
	_, err = conn.Exec(ctx, laneKeepaliveSQL)
	if err == nil {
		_, err = conn.Exec(ctx, `LISTEN `+LaneWakeChannel)
	}
	if err == nil {
		err = conn.QueryRow(ctx, `SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()`).Scan(&started)
	}
	if err != nil {
		conn.Close(context.Background())
		return fmt.Errorf("store: lane wake session %s: %w", l.site, translate(err))
	}
	l.conn, l.pid, l.started = conn, conn.PgConn().PID(), started
	return nil
}

// renew renews the lease every third of its time until ctx ends, and marks
// the lock lost when another holder has the Lane. A renewal that fails
// (the database away) is tried again on the next tick: the lease is lost
// only when someone else took it.
func (l *LaneLock) renew(ctx context.Context) {
	t := time.NewTicker(max(l.ask.TTL/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := l.Renew(ctx); errors.Is(err, ErrLaneLost) {
			return
		}
	}
}

// Renew renews the lease now: nil while it is this holder's, ErrLaneLost
// once another holder took it (for good: the lock stays lost), another
// error when the database could not answer.
func (l *LaneLock) Renew(ctx context.Context) error {
	select {
	case <-l.lost:
		return ErrLaneLost
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	held, _, err := l.store.claimLane(ctx, l.site, l.ask)
	if err != nil {
		return err
	}
	if !held {
		l.lostOnce.Do(func() { close(l.lost) })
		return ErrLaneLost
	}
	return nil
}

// Lost reports whether a renewal found another holder leading the Lane.
func (l *LaneLock) Lost() bool {
	select {
	case <-l.lost:
		return true
	default:
		return false
	}
}

// wakeCheck is how long a wait listens before it makes sure its session
// still answers: a session cut without a word (a half-open connection)
// would otherwise wait out the whole rest deaf to every wake.
const wakeCheck = 10 * time.Second

// WaitWake blocks until a wake for this Lane's Site arrives (nil), ctx ends
// (ctx's error), the lease is lost (ErrLaneLost), or the wake session fails
// or stops answering (another error; Rewake replaces it). Wakes for other
// Sites are skipped. A wake sent while the Lane was busy is kept by the
// session and returned at once.
func (l *LaneLock) WaitWake(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return fmt.Errorf("store: lane wake %s: no session", l.site)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-l.lost:
			cancel(ErrLaneLost)
		case <-ctx.Done():
		}
	}()
	for {
		sctx, scancel := context.WithTimeout(ctx, wakeCheck)
		n, err := l.conn.WaitForNotification(sctx)
		scancel()
		switch {
		case err == nil:
			if n != nil && n.Payload == l.site {
				return nil
			}
			continue
		case ctx.Err() != nil:
			return context.Cause(ctx)
		case errors.Is(err, context.DeadlineExceeded) || sctx.Err() != nil:
			pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
			err = l.conn.Ping(pctx)
			pcancel()
			if err == nil {
				continue
			}
		}
		return fmt.Errorf("store: lane wake %s: %w", l.site, err)
	}
}

// Rewake replaces a wake session that failed, keeping the lease: the lease
// is the holder's, whatever became of the session (ADR 0018).
func (l *LaneLock) Rewake(ctx context.Context) error {
	if err := l.Renew(ctx); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.endSession(true)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return l.connect(ctx)
}

// Release ends the lease at once, so another process may take the Lane,
// and closes the wake session.
func (l *LaneLock) Release() {
	l.stop()
	l.renewed.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = l.store.pool.Exec(ctx, laneReleaseSQL, l.site, l.ask.Holder)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.endSession(false)
}

// endSession closes the wake session, and ends its backend when the
// session broke under us or is being replaced (a half-open session's
// backend would linger, deaf). The caller holds l.mu.
func (l *LaneLock) endSession(replaced bool) {
	if l.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	broken := l.conn.IsClosed()
	_ = l.conn.Close(ctx)
	if broken || replaced {
		_, _ = l.store.pool.Exec(ctx, laneTerminateSQL, int64(l.pid), l.started)
	}
	l.conn = nil
}

// laneTerminateSQL ends a wake session's backend and waits (up to 5 s) for
// it to exit; matching backend_start too means a reused pid is never hit.
const laneTerminateSQL = `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
WHERE pid = $1 AND backend_start = $2`

// unledExpr is the moment from which nobody has led site, on the clock of
// now (the pass's, or the page's): the end of its last lease, when that is
// past, no earlier than from (the lookback's start); NULL while a lease
// runs or when no process ever led the Lane. A lease lives on the
// database's clock (laneClaimSQL), so whether it ended and how long ago are
// read there, and that age is set back from now: a clock of the caller's
// own (the demo's, which skips ahead) never makes a led Lane look un-led.
// The stall condition reads it: a Lane nobody leads polls nothing, and
// writes no pass to say so (ADR 0018).
func unledExpr(site, now, from string) string {
	return `(SELECT greatest(` + now + `::timestamptz - (now() - ll.expires_at), ` + from + `::timestamptz)
        FROM lane_leases ll WHERE ll.site = ` + site + ` AND ll.expires_at <= now())`
}

// UnledLanes returns the Sites nobody has led for at least d (ADR 0018),
// by the database's clock, the leases' own.
func (s *Store) UnledLanes(ctx context.Context, d time.Duration) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT site FROM lane_leases
		WHERE expires_at <= now() - $1 * interval '1 millisecond' ORDER BY site`, d.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("store: unled lanes: %w", translate(err))
	}
	sites, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store: unled lanes: %w", translate(err))
	}
	return sites, nil
}
