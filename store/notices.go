package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Owner notices (seed 001, "Where it fires from, and suppression").
//
// The four conditions are derived here, never stored; owner_notices only
// remembers that the owner was told. Every derivation reads the pass log
// through its (site, started_at) index inside a bounded lookback, or one
// Site's Series through series_due and the failure rows through their
// primary key. The plans below were read with EXPLAIN on PostgreSQL 15 over
// a seeded pass log.
//
// Runs of passes (SPEC.md, "Owner notices"): a Lane's passes, ordered by
// started_at, form runs of passes of the same kind. A condition's age is the
// start of the run the Lane's newest pass belongs to; a pass of any other
// kind ends the run. So the run start is "the first pass after the newest
// pass of another kind", and when the newest pass is itself of another kind
// there is no pass after it and no run. Passes skipped as not-leader are
// ignored: they are another replica declining a Lane it does not hold, not a
// pass of the Lane.
//
// The lookback bounds every scan. A run that began before it is reported as
// beginning at its first pass inside it, so an age reads "at least" the
// lookback there; the pass log is pruned after days anyway.

// The kinds of pass a run is made of. Each is a SQL predicate over one
// poll_passes row aliased p; they are constants, never built from input.
const (
	// stall: due > 0 AND checked = 0 AND skip = '' AND refused = 0.
	stallPassPred = `(p.due > 0 AND p.checked = 0 AND p.skip = '' AND p.refused = 0)`

	// refusing (no-browser-route): inside the Lane's refusal, or a pass that
	// ran, met a refusal and read nothing.
	refusingPassPred = `(p.skip = 'refusing' OR (p.skip = '' AND p.refused > 0
		AND p.ok = 0 AND p.no_chapter = 0 AND p.not_found = 0))`

	// A browser pass that failed to reach the sidecar: a sibling Lane lost it,
	// there is no fetcher, or every Poll that got as far as the fetch found it
	// unreachable (unfetchable Polls never fetch, so they say nothing either
	// way).
	sidecarFailPred = `(p.skip IN ('browser-down', 'no-browser') OR (p.skip = '' AND p.unreachable > 0
		AND p.ok = 0 AND p.no_chapter = 0 AND p.not_found = 0 AND p.errors = 0 AND p.refused = 0))`

	// A browser pass that reached the sidecar: some Poll in it ended in an
	// outcome other than unreachable and unfetchable.
	sidecarReachPred = `(p.skip = '' AND (p.ok + p.no_chapter + p.not_found + p.errors + p.refused) > 0)`
)

// runStartSQL finds the start of the run of <pred> passes the Site's newest
// pass at or before $2 belongs to, looking back to $3.
//
// Plan (EXPLAIN ANALYZE, PostgreSQL 15, 21,600 passes over six Sites):
// Limit -> Index Scan using poll_passes_site_started (Index Cond: site = $1
// AND started_at in [$3, $2] AND started_at > InitPlan), where the InitPlan
// is Limit -> Index Scan Backward on the same index filtered by NOT <pred>.
// 5 buffers for a healthy Lane; a long run reads at most one Site's
// lookback.
func runStartSQL(pred string) string { return runStartExpr(pred, "$1", "$2", "$3") }

// runStartExpr is runStartSQL over any site, now and lookback expressions,
// so the verdict line's one statement (conditionsSQL) asks the very same
// question of every Site at once.
func runStartExpr(pred, site, now, from string) string {
	return `
SELECT p.started_at FROM poll_passes p
WHERE p.site = ` + site + ` AND p.started_at <= ` + now + ` AND p.started_at >= ` + from + ` AND p.skip <> 'not-leader'
  AND p.started_at > coalesce((
      SELECT p.started_at FROM poll_passes p
      WHERE p.site = ` + site + ` AND p.started_at <= ` + now + ` AND p.started_at >= ` + from + ` AND p.skip <> 'not-leader'
        AND NOT ` + pred + `
      ORDER BY p.started_at DESC LIMIT 1), ` + from + ` - 1)
ORDER BY p.started_at LIMIT 1`
}

var (
	stallRunSQL    = runStartSQL(stallPassPred)
	refusingRunSQL = runStartSQL(refusingPassPred)
)

// StallRun returns when the Site's current run of stall passes began, and
// false when its newest pass at or before now is not a stall pass.
func (s *Store) StallRun(ctx context.Context, site string, now, lookbackFrom int64) (int64, bool, error) {
	return s.runStart(ctx, "stall", stallRunSQL, site, now, lookbackFrom)
}

// RefusingRun returns when the Site's current run of refusing passes began,
// and false when its newest pass at or before now is not a refusing pass.
func (s *Store) RefusingRun(ctx context.Context, site string, now, lookbackFrom int64) (int64, bool, error) {
	return s.runStart(ctx, "refusing", refusingRunSQL, site, now, lookbackFrom)
}

func (s *Store) runStart(ctx context.Context, what, sql, site string, now, from int64) (int64, bool, error) {
	var since int64
	err := s.pool.QueryRow(ctx, sql, site, now, from).Scan(&since)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("store: %s run of %s: %w", what, site, translate(err))
	}
	return since, true, nil
}

// sidecarDownRunSQL: across the browser Lanes ($1) together, the first pass
// that failed to reach the sidecar after the last pass that reached it.
// Passes of neither kind are ignored. A failure after the last reach means
// the newest pass of either kind is a failure, so finding one is the
// condition's run.
//
// Plan (same data): Nested Loop over the unnested browser Sites; per Site a
// Limit -> Index Scan Backward using poll_passes_site_started for the last
// reach, and a Bitmap Index Scan on the same index (site, started_at range)
// for the first failure after it. No Site outside $1 is read.
var sidecarDownRunSQL = sidecarDownExpr("$1", "$2", "$3")

func sidecarDownExpr(sites, now, from string) string {
	return `
WITH b AS (SELECT unnest(` + sites + `::text[]) AS site),
reach AS (
    SELECT max(r.t) AS t FROM b CROSS JOIN LATERAL (
        SELECT p.started_at AS t FROM poll_passes p
        WHERE p.site = b.site AND p.started_at <= ` + now + ` AND p.started_at >= ` + from + `
          AND ` + sidecarReachPred + `
        ORDER BY p.started_at DESC LIMIT 1) r
)
SELECT min(f.t) FROM b CROSS JOIN LATERAL (
    SELECT p.started_at AS t FROM poll_passes p
    WHERE p.site = b.site AND p.started_at <= ` + now + ` AND p.started_at >= ` + from + `
      AND p.started_at > coalesce((SELECT t FROM reach), ` + from + ` - 1)
      AND ` + sidecarFailPred + `
    ORDER BY p.started_at LIMIT 1) f`
}

// SidecarDownRun returns when the browser Lanes' current run of passes that
// failed to reach the sidecar began, and false when the newest pass that
// either reached it or failed to is one that reached it (or there is none).
func (s *Store) SidecarDownRun(ctx context.Context, browserSites []string, now, lookbackFrom int64) (int64, bool, error) {
	if len(browserSites) == 0 {
		return 0, false, nil
	}
	var since *int64
	if err := s.pool.QueryRow(ctx, sidecarDownRunSQL, browserSites, now, lookbackFrom).Scan(&since); err != nil {
		return 0, false, fmt.Errorf("store: sidecar-down run: %w", translate(err))
	}
	if since == nil {
		return 0, false, nil
	}
	return *since, true, nil
}

// adapterBrokenExpr is the moment more than half of one Site's pollable
// Series (not Finished, with an address: N of them) began holding a
// no_chapter failure row, or NULL while at most half hold one of any age.
// The condition holds when that moment is at or before now − ownerWindow:
// F, the rows failing since then, exceeds N/2 exactly when the m-th oldest
// row (m = floor(N/2) + 1) is that old, and its failing_since is the age.
//
// site_tallies (migration 0009) keeps N and the count of no_chapter rows of
// any age, T, in step with every write. While 2T <= N the share cannot pass
// half and nothing else is read; only a Site past half walks m entries of
// series_no_chapter_since (site, failing_since), index-only.
func adapterBrokenExpr(site string) string {
	return `(SELECT CASE WHEN 2 * t.no_chapter > t.pollable THEN (
        SELECT x.failing_since FROM series x
        WHERE x.site = t.site AND x.failure_outcome = 'no_chapter' AND x.finished_at = 0 AND x.url <> ''
        ORDER BY x.failing_since OFFSET t.pollable / 2 LIMIT 1) END
    FROM site_tallies t WHERE t.site = ` + site + `)`
}

var adapterBrokenSQL = `SELECT ` + adapterBrokenExpr("$1")

// AdapterBroken reports whether more than half of the Site's pollable Series
// hold a no_chapter failure row with failing_since at or before cutoff
// (exactly half does not), and since when that share has been past half.
func (s *Store) AdapterBroken(ctx context.Context, site string, cutoff int64) (int64, bool, error) {
	var since *int64
	if err := s.pool.QueryRow(ctx, adapterBrokenSQL, site).Scan(&since); err != nil {
		return 0, false, fmt.Errorf("store: adapter-broken share of %s: %w", site, translate(err))
	}
	if since == nil || *since > cutoff {
		return 0, false, nil
	}
	return *since, true, nil
}

// ConditionsQuery is what the verdict line asks of every Site at once.
type ConditionsQuery struct {
	Sites        []string // every Site, in the verdict line's order
	RefusalSites []string // the Sites no-browser-route is evaluated for
	BrowserSites []string // sidecar-down's Lanes; empty: not evaluated
	Now, From    int64    // the pass time and the lookback's start
}

// SiteConditions is one Site's row of conditionsSQL: each run's start (or
// the adapter-broken moment), nil where there is none.
type SiteConditions struct {
	Site          string `db:"site"`
	StallSince    *int64 `db:"stall_since"`
	RefusingSince *int64 `db:"refusing_since"`
	BrokenSince   *int64 `db:"broken_since"`
	SidecarSince  *int64 `db:"sidecar_since"` // the same on every row
}

// conditionsSQL is every condition of every Site in one statement, built
// from the same expressions the per-pass checks run one at a time, so the
// verdict line and the push cannot disagree. Each correlated subquery is
// one Site's bounded index read (see runStartSQL, sidecarDownRunSQL,
// adapterBrokenExpr); sidecar-down is uncorrelated and runs once.
var conditionsSQL = `
SELECT l.site,
       (` + runStartExpr(stallPassPred, "l.site", "@now", "@from") + `) AS stall_since,
       CASE WHEN l.site = ANY(@refusal_sites) THEN (` + runStartExpr(refusingPassPred, "l.site", "@now", "@from") + `) END AS refusing_since,
       ` + adapterBrokenExpr("l.site") + ` AS broken_since,
       CASE WHEN cardinality(@browser_sites::text[]) > 0 THEN (` + sidecarDownExpr("@browser_sites", "@now", "@from") + `) END AS sidecar_since
  FROM unnest(@sites::text[]) WITH ORDINALITY AS l(site, n)
 ORDER BY l.n`

// Conditions queues every Site's conditions into dst.
func (b *Batch) Conditions(q ConditionsQuery, dst *[]SiteConditions) {
	queueMany(b, "conditions", dst, conditionsSQL, pgx.NamedArgs{
		"sites": q.Sites, "refusal_sites": q.RefusalSites, "browser_sites": q.BrowserSites,
		"now": q.Now, "from": q.From,
	})
}

// WebhookDeadAt queues the dead-webhook read into at (0 when it never died).
func (b *Batch) WebhookDeadAt(urlHash string, at *int64) {
	b.b.Queue(`SELECT coalesce(max(dead_at), 0) FROM dead_webhooks WHERE url_hash = $1`, urlHash).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(at); err != nil {
			return fmt.Errorf("store: dead webhook: %w", translate(err))
		}
		return nil
	})
}

// NoticeState is one open owner notice and its last failed delivery, if any.
type NoticeState struct {
	Kind           string `db:"kind"`
	Site           string `db:"site"`
	NotifiedAt     int64  `db:"notified_at"`
	Attempts       int    `db:"attempts"`
	LastAttemptAt  int64  `db:"last_attempt_at"`
	LastError      string `db:"last_error"`
	RetryNotBefore int64  `db:"retry_not_before"`
	GaveUp         bool   `db:"gave_up"`
}

// Delivery is what one claim of a notice did, written back in the claim's
// transaction.
type Delivery struct {
	// Skip: no attempt was made; nothing is written.
	Skip bool
	// SentAt > 0: Discord accepted the message at this time.
	SentAt int64
	// Otherwise an attempt failed at AttemptAt with Err (text already free of
	// secrets), to be retried no earlier than RetryNotBefore. GiveUp records
	// that Discord refused the message itself (a 4xx other than 404 and 429),
	// so the same message is not simply retried on the next pass.
	AttemptAt      int64
	Err            string
	RetryNotBefore int64
	GiveUp         bool
}

// openNoticeSQL: the insertion is the lock — the first process to see the
// condition creates the row; every other finds it present.
const openNoticeSQL = `INSERT INTO owner_notices (kind, site) VALUES ($1, $2) ON CONFLICT (kind, site) DO NOTHING`

// OpenNotice records that a condition holds (idempotent).
func (s *Store) OpenNotice(ctx context.Context, kind, site string) error {
	if _, err := s.pool.Exec(ctx, openNoticeSQL, kind, site); err != nil {
		return fmt.Errorf("store: open notice %s/%s: %w", kind, site, translate(err))
	}
	return nil
}

// closeNoticeSQL ends an episode; its attempts cascade. Primary-key delete.
// $3 > 0 is the start of a run of the condition's passes that is still going
// but not yet past the window at the caller's clock: a notice sent at or
// after it was sent for this very run (by a Lane or replica whose clock read
// later) and stays open.
const closeNoticeSQL = `DELETE FROM owner_notices
WHERE kind = $1 AND site = $2 AND NOT ($3::bigint > 0 AND notified_at >= $3::bigint)`

// CloseNotice forgets a notice whose condition no longer holds, so the next
// episode sends a new message. Closing a notice that is not open is a no-op.
// runSince is 0 when the condition's run has ended; when a run is still going
// but is younger than the window at the caller's pass time, it is the run's
// start, and a notice already sent for that run is kept.
func (s *Store) CloseNotice(ctx context.Context, kind, site string, runSince int64) error {
	if _, err := s.pool.Exec(ctx, closeNoticeSQL, kind, site, runSince); err != nil {
		return fmt.Errorf("store: close notice %s/%s: %w", kind, site, translate(err))
	}
	return nil
}

const noticeColumns = `n.kind, n.site, n.notified_at,
	coalesce(a.attempts, 0) AS attempts, coalesce(a.last_attempt_at, 0) AS last_attempt_at,
	coalesce(a.last_error, '') AS last_error, coalesce(a.retry_not_before, 0) AS retry_not_before,
	coalesce(a.gave_up, false) AS gave_up`

// claimNoticeSQL locks one notice row, or returns nothing when another
// process holds it (SKIP LOCKED): that process is sending, so this one stays
// quiet. Both tables are keyed (kind, site) and hold at most 19 rows.
const claimNoticeSQL = `
SELECT ` + noticeColumns + `
FROM owner_notices n
LEFT JOIN owner_notice_attempts a ON a.kind = n.kind AND a.site = n.site
WHERE n.kind = $1 AND n.site = $2
FOR UPDATE OF n SKIP LOCKED`

const markNoticeSentSQL = `UPDATE owner_notices SET notified_at = $3 WHERE kind = $1 AND site = $2`

const clearNoticeAttemptsSQL = `DELETE FROM owner_notice_attempts WHERE kind = $1 AND site = $2`

const recordNoticeAttemptSQL = `
INSERT INTO owner_notice_attempts (kind, site, attempts, last_attempt_at, last_error, retry_not_before, gave_up)
VALUES ($1, $2, 1, $3, $4, $5, $6)
ON CONFLICT (kind, site) DO UPDATE SET
    attempts = owner_notice_attempts.attempts + 1,
    last_attempt_at = excluded.last_attempt_at,
    last_error = excluded.last_error,
    retry_not_before = excluded.retry_not_before,
    gave_up = excluded.gave_up`

// ClaimNotice locks the open notice (kind, site) and calls deliver with its
// state while holding the lock, then writes what deliver reports in the same
// transaction: notified_at only after Discord accepted, otherwise the failed
// attempt. Two processes claiming one notice at once cannot both deliver:
// the second finds the row locked and returns false without calling deliver.
// It also returns false when the notice is not open.
func (s *Store) ClaimNotice(ctx context.Context, kind, site string, deliver func(NoticeState) Delivery) (bool, error) {
	claimed := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, claimNoticeSQL, kind, site)
		if err != nil {
			return err
		}
		st, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[NoticeState])
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		claimed = true
		d := deliver(st)
		switch {
		case d.Skip:
			return nil
		case d.SentAt > 0:
			if _, err := tx.Exec(ctx, markNoticeSentSQL, kind, site, d.SentAt); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, clearNoticeAttemptsSQL, kind, site)
			return err
		default:
			_, err := tx.Exec(ctx, recordNoticeAttemptSQL, kind, site, d.AttemptAt, d.Err, d.RetryNotBefore, d.GiveUp)
			return err
		}
	})
	if err != nil {
		return false, fmt.Errorf("store: claim notice %s/%s: %w", kind, site, translate(err))
	}
	return claimed, nil
}

// listNoticesSQL reads every open notice. owner_notices is bounded by
// construction (four kinds times six Sites, plus sidecar-down's one row), so
// reading it whole is reading at most 19 rows.
const listNoticesSQL = `
SELECT ` + noticeColumns + `
FROM owner_notices n
LEFT JOIN owner_notice_attempts a ON a.kind = n.kind AND a.site = n.site
ORDER BY n.kind, n.site`

// Notices lists the open owner notices with their last failed delivery.
func (s *Store) Notices(ctx context.Context) ([]NoticeState, error) {
	v, err := getMany[NoticeState](ctx, s, listNoticesSQL)
	if err != nil {
		return nil, fmt.Errorf("store: list notices: %w", err)
	}
	return v, nil
}

const deadWebhookSQL = `SELECT dead_at FROM dead_webhooks WHERE url_hash = $1`

// WebhookDeadAt returns when Discord answered 404 for the webhook whose
// address hashes to urlHash, or 0 when it never did.
func (s *Store) WebhookDeadAt(ctx context.Context, urlHash string) (int64, error) {
	var at int64
	err := s.pool.QueryRow(ctx, deadWebhookSQL, urlHash).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: dead webhook: %w", translate(err))
	}
	return at, nil
}

const markWebhookDeadSQL = `INSERT INTO dead_webhooks (url_hash, dead_at) VALUES ($1, $2) ON CONFLICT (url_hash) DO NOTHING`

// MarkWebhookDead records that Discord answered 404 for this webhook, so no
// process sends to it again until the setting changes.
func (s *Store) MarkWebhookDead(ctx context.Context, urlHash string, at int64) error {
	if _, err := s.pool.Exec(ctx, markWebhookDeadSQL, urlHash, at); err != nil {
		return fmt.Errorf("store: mark webhook dead: %w", translate(err))
	}
	return nil
}
