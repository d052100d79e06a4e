package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/word"
)

// Owner notices (CONTEXT.md, Rules: Notices fire from the pass).
//
// The four conditions are derived here, never stored; owner_notices only
// remembers that the owner was told. Every derivation reads the pass log
// through its (site, started_at) index inside a bounded lookback, or one
// Site's Series through series_due and the failure rows through their
// primary key; TestThePlans holds each statement to its index.
//
// Runs of passes (CONTEXT.md, the owner-notice derivations): a Lane's passes, ordered by
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
// poll_passes row aliased p, built from the word constants, never from
// input.
var (
	ran = `p.skip = ` + word.SkipNone.SQL()

	// stall: due > 0 AND checked = 0 AND skip = '' AND refused = 0.
	stallPassPred = `(p.due > 0 AND p.checked = 0 AND ` + ran + ` AND ` + col(word.Refused) + ` = 0)`

	// refusing (no-browser-route): inside the Lane's refusal, or a pass that
	// ran, met a refusal and read nothing.
	refusingPassPred = `(p.skip = ` + word.SkipRefusing.SQL() + ` OR (` + ran + ` AND ` + col(word.Refused) + ` > 0
		AND ` + none(word.OK, word.NoChapter, word.NotFound) + `))`

	// A browser pass that failed to reach the sidecar: a sibling Lane lost it,
	// there is no fetcher, or every Poll that got as far as the fetch found it
	// unreachable (unfetchable Polls never fetch, so they say nothing either
	// way).
	sidecarFailPred = `(p.skip IN (` + word.SkipBrowserDown.SQL() + `, ` + word.SkipNoBrowser.SQL() + `) OR (` + ran +
		` AND ` + col(word.Unreachable) + ` > 0
		AND ` + none(word.OK, word.NoChapter, word.NotFound, word.Errors, word.Refused) + `))`

	// A browser pass that reached the sidecar: some Poll in it ended in an
	// outcome other than unreachable and unfetchable.
	sidecarReachPred = `(` + ran + ` AND (` + plus(word.OK, word.NoChapter, word.NotFound, word.Errors, word.Refused) + `) > 0)`

	// notLeader: a pass another replica declined; the runs ignore it.
	notLeader = `p.skip <> ` + word.SkipNotLeader.SQL()
)

// col is the pass row's count column of o.
func col(o word.Outcome) string { return o.Column("p") }

// plus adds the counts of os.
func plus(os ...word.Outcome) string {
	parts := make([]string, len(os))
	for i, o := range os {
		parts[i] = col(o)
	}
	return strings.Join(parts, ` + `)
}

// none says every count of os is zero.
func none(os ...word.Outcome) string {
	parts := make([]string, len(os))
	for i, o := range os {
		parts[i] = col(o) + ` = 0`
	}
	return strings.Join(parts, ` AND `)
}

// runStartSQL finds the start of the run of <pred> passes the Site's newest
// pass at or before $2 belongs to, looking back to $3.
//
// Both scans walk poll_passes_site_started inside [$3, $2], so a long run
// reads at most one Site's lookback (TestThePlans).
func runStartSQL(pred string) string { return runStartExpr(pred, "$1", "$2", "$3") }

// runStartExpr is runStartSQL over any site, now and lookback expressions,
// so the verdict line's one statement (conditionsSQL) asks the very same
// question of every Site at once.
func runStartExpr(pred, site, now, from string) string {
	return `
SELECT p.started_at FROM poll_passes p
WHERE p.site = ` + site + ` AND p.started_at <= ` + now + ` AND p.started_at >= ` + from + ` AND ` + notLeader + `
  AND p.started_at > coalesce((
      SELECT p.started_at FROM poll_passes p
      WHERE p.site = ` + site + ` AND p.started_at <= ` + now + ` AND p.started_at >= ` + from + ` AND ` + notLeader + `
        AND NOT ` + pred + `
      ORDER BY p.started_at DESC LIMIT 1), ` + from + `::timestamptz - interval '1 millisecond')
ORDER BY p.started_at LIMIT 1`
}

var (
	stallRunSQL    = `SELECT ` + stallExpr("$1", "$2", "$3")
	refusingRunSQL = runStartSQL(refusingPassPred)
)

// stallExpr is when the Site's stall began: the start of its run of stall
// passes, or the moment from which nobody has led its Lane (ADR 0018),
// whichever is earlier; NULL when neither. A Lane nobody leads polls
// nothing and writes no pass; its stall is told from its lease, and never
// read as another replica's turn. An un-led moment older than the lookback
// reads as the lookback, as a run does.
func stallExpr(site, now, from string) string {
	return `least((` + runStartExpr(stallPassPred, site, now, from) + `), ` + unledExpr(site, now, from) + `)`
}

// StallRun returns when the Site's stall began (stallExpr), and false when
// its newest pass at or before now is not a stall pass and its Lane is led.
func (s *Store) StallRun(ctx context.Context, site string, now, lookbackFrom time.Time) (time.Time, bool, error) {
	var since time.Time // NULL, the zero time: no stall
	err := s.pool.QueryRow(ctx, stallRunSQL, site, instant(now), instant(lookbackFrom)).Scan(&since)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: %s run of %s: %w", word.Stall, site, translate(err))
	}
	return since, !since.IsZero(), nil
}

// RefusingRun returns when the Site's current run of refusing passes began,
// and false when its newest pass at or before now is not a refusing pass.
func (s *Store) RefusingRun(ctx context.Context, site string, now, lookbackFrom time.Time) (time.Time, bool, error) {
	return s.runStart(ctx, string(word.SkipRefusing), refusingRunSQL, site, now, lookbackFrom)
}

func (s *Store) runStart(ctx context.Context, what, sql, site string, now, from time.Time) (time.Time, bool, error) {
	var since time.Time
	err := s.pool.QueryRow(ctx, sql, site, instant(now), instant(from)).Scan(&since)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: %s run of %s: %w", what, site, translate(err))
	}
	return since, true, nil
}

// sidecarDownRunSQL: across the browser Lanes ($1) together, the first pass
// that failed to reach the sidecar after the last pass that reached it.
// Passes of neither kind are ignored. A failure after the last reach means
// the newest pass of either kind is a failure, so finding one is the
// condition's run.
//
// Per browser Site it walks poll_passes_site_started, so no Site outside
// $1 is read (TestThePlans).
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
      AND p.started_at > coalesce((SELECT t FROM reach), ` + from + `::timestamptz - interval '1 millisecond')
      AND ` + sidecarFailPred + `
    ORDER BY p.started_at LIMIT 1) f`
}

// SidecarDownRun returns when the browser Lanes' current run of passes that
// failed to reach the sidecar began, and false when the newest pass that
// either reached it or failed to is one that reached it (or there is none).
func (s *Store) SidecarDownRun(ctx context.Context, browserSites []string, now, lookbackFrom time.Time) (time.Time, bool, error) {
	if len(browserSites) == 0 {
		return time.Time{}, false, nil
	}
	var since time.Time // NULL, the zero time: no run
	if err := s.pool.QueryRow(ctx, sidecarDownRunSQL, browserSites, instant(now), instant(lookbackFrom)).Scan(&since); err != nil {
		return time.Time{}, false, fmt.Errorf("store: sidecar-down run: %w", translate(err))
	}
	return since, !since.IsZero(), nil
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
        WHERE x.site = t.site AND x.failure_outcome = ` + word.NoChapter.SQL() + ` AND x.finished_at IS NULL AND x.url <> ''
        ORDER BY x.failing_since OFFSET t.pollable / 2 LIMIT 1) END
    FROM site_tallies t WHERE t.site = ` + site + `)`
}

var adapterBrokenSQL = `SELECT ` + adapterBrokenExpr("$1")

// AdapterBroken reports whether more than half of the Site's pollable Series
// hold a no_chapter failure row with failing_since at or before cutoff
// (exactly half does not), and since when that share has been past half.
func (s *Store) AdapterBroken(ctx context.Context, site string, cutoff time.Time) (time.Time, bool, error) {
	var since time.Time // NULL, the zero time: at most half
	if err := s.pool.QueryRow(ctx, adapterBrokenSQL, site).Scan(&since); err != nil {
		return time.Time{}, false, fmt.Errorf("store: adapter-broken share of %s: %w", site, translate(err))
	}
	if since.IsZero() || since.After(cutoff.Truncate(time.Millisecond)) {
		return time.Time{}, false, nil
	}
	return since, true, nil
}

// ConditionsQuery is what the verdict line asks of every Site at once.
type ConditionsQuery struct {
	Sites        []string  // every Site, in the verdict line's order
	RefusalSites []string  // the Sites no-browser-route is evaluated for
	BrowserSites []string  // sidecar-down's Lanes; empty: not evaluated
	Now, From    time.Time // the pass time and the lookback's start
}

// SiteConditions is one Site's row of conditionsSQL: each run's start (or
// the adapter-broken moment), the zero time where there is none.
type SiteConditions struct {
	Site          string    `db:"site"`
	StallSince    time.Time `db:"stall_since"`
	RefusingSince time.Time `db:"refusing_since"`
	BrokenSince   time.Time `db:"broken_since"`
	SidecarSince  time.Time `db:"sidecar_since"` // the same on every row
}

// conditionsSQL is every condition of every Site in one statement, built
// from the same expressions the per-pass checks run one at a time, so the
// verdict line and the push cannot disagree. Each correlated subquery is
// one Site's bounded index read (see runStartSQL, sidecarDownRunSQL,
// adapterBrokenExpr); sidecar-down is uncorrelated and runs once.
var conditionsSQL = `
SELECT l.site,
       ` + stallExpr("l.site", "@now", "@from") + ` AS stall_since,
       CASE WHEN l.site = ANY(@refusal_sites) THEN (` + runStartExpr(refusingPassPred, "l.site", "@now", "@from") + `) END AS refusing_since,
       ` + adapterBrokenExpr("l.site") + ` AS broken_since,
       CASE WHEN cardinality(@browser_sites::text[]) > 0 THEN (` + sidecarDownExpr("@browser_sites", "@now", "@from") + `) END AS sidecar_since
  FROM unnest(@sites::text[]) WITH ORDINALITY AS l(site, n)
 ORDER BY l.n`

// Conditions queues every Site's conditions into dst.
func (b *Batch) Conditions(q ConditionsQuery, dst *[]SiteConditions) {
	queueMany(b, "conditions", dst, conditionsSQL, pgx.NamedArgs{
		"sites": q.Sites, "refusal_sites": q.RefusalSites, "browser_sites": q.BrowserSites,
		"now": instant(q.Now), "from": instant(q.From),
	})
}

// WebhookDeadAt queues the dead-webhook read into at (the zero time when it
// never died).
func (b *Batch) WebhookDeadAt(urlHash string, at *time.Time) {
	b.b.Queue(`SELECT max(dead_at) FROM dead_webhooks WHERE url_hash = $1`, urlHash).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(at); err != nil {
			return fmt.Errorf("store: dead webhook: %w", translate(err))
		}
		return nil
	})
}

// NoticeState is one open owner notice and its last failed delivery, if any.
type NoticeState struct {
	Kind       word.NoticeKind `db:"kind"`
	Site       string          `db:"site"`
	NotifiedAt time.Time       `db:"notified_at"`
	// SentUnknown: the message was sent and no answer came (or its sender
	// stopped mid-send), so it may not have arrived; it is not sent again.
	SentUnknown    bool      `db:"sent_unknown"`
	Attempts       int       `db:"attempts"`
	LastAttemptAt  time.Time `db:"last_attempt_at"`
	LastError      string    `db:"last_error"`
	RetryNotBefore time.Time `db:"retry_not_before"`
	GaveUp         bool      `db:"gave_up"`
	// ClaimedBy and ClaimedAt (wall clock) name the process sending the
	// notice right now; empty and the zero time when none is.
	ClaimedBy string    `db:"claimed_by"`
	ClaimedAt time.Time `db:"claimed_at"`
}

// Delivery is what one claimed send did, recorded when the claim is let go.
type Delivery struct {
	// SentAt, when set: Discord accepted the message at this time, or,
	// with Unknown, the request was written then and no answer came (Err
	// says how): the message may have arrived, so it counts as sent and is
	// not sent again (docs/adr/0005).
	SentAt  time.Time
	Unknown bool
	// Otherwise an attempt failed at AttemptAt with Err (text already free of
	// secrets), to be retried no earlier than RetryNotBefore. GiveUp records
	// that Discord refused the message itself (a 4xx other than 404 and 429),
	// so the same message is not simply retried on the next pass.
	AttemptAt      time.Time
	Err            string
	RetryNotBefore time.Time
	GiveUp         bool
}

// openNoticeSQL: the insertion is the lock — the first process to see the
// condition creates the row; every other finds it present.
const openNoticeSQL = `INSERT INTO owner_notices (kind, site) VALUES ($1, $2) ON CONFLICT (kind, site) DO NOTHING`

// OpenNotice records that a condition holds (idempotent).
func (s *Store) OpenNotice(ctx context.Context, kind word.NoticeKind, site string) error {
	if _, err := s.pool.Exec(ctx, openNoticeSQL, kind, site); err != nil {
		return fmt.Errorf("store: open notice %s/%s: %w", kind, site, translate(err))
	}
	return nil
}

// closeNoticeSQL ends an episode; its attempts and claim cascade.
// Primary-key delete. $3, when set, is the start of a run of the condition's passes
// that is still going but not yet past the window at the caller's clock: a
// notice sent at or after it was sent for this very run (by a Lane or
// replica whose clock read later) and stays open.
const closeNoticeSQL = `DELETE FROM owner_notices
WHERE kind = $1 AND site = $2 AND NOT coalesce(notified_at >= $3::timestamptz, false)`

// CloseNotice forgets a notice whose condition no longer holds, so the next
// episode sends a new message. Closing a notice that is not open is a no-op.
// runSince is the zero time when the condition's run has ended; when a run is still going
// but is younger than the window at the caller's pass time, it is the run's
// start, and a notice already sent for that run is kept.
func (s *Store) CloseNotice(ctx context.Context, kind word.NoticeKind, site string, runSince time.Time) error {
	if _, err := s.pool.Exec(ctx, closeNoticeSQL, kind, site, stamp(runSince)); err != nil {
		return fmt.Errorf("store: close notice %s/%s: %w", kind, site, translate(err))
	}
	return nil
}

const noticeColumns = `n.kind, n.site, n.notified_at,
	coalesce(a.attempts, 0) AS attempts, a.last_attempt_at,
	coalesce(a.last_error, '') AS last_error, a.retry_not_before,
	coalesce(a.gave_up, false) AS gave_up, coalesce(a.sent_unknown, false) AS sent_unknown,
	coalesce(c.claimed_by, '') AS claimed_by, c.claimed_at`

const noticeJoins = `
LEFT JOIN owner_notice_attempts a ON a.kind = n.kind AND a.site = n.site
LEFT JOIN owner_notice_claims c ON c.kind = n.kind AND c.site = n.site`

// claimNoticeSQL takes the claim of an open, unsent notice whose retry time
// ($5) has come, in one committed statement (docs/adr/0005). A claim another
// process holds makes it insert nothing. FOR UPDATE makes the statement read
// the notice as it is now, not as its snapshot had it: without it, a claim
// whose snapshot predates another process recording "sent" (which deletes
// that process's claim in the same statement) finds notified_at NULL and no
// conflicting claim, and sends the message a second time. All three tables are keyed
// (kind, site) and hold at most 19 rows.
const claimNoticeSQL = `
INSERT INTO owner_notice_claims (kind, site, claimed_by, claimed_at)
SELECT n.kind, n.site, $3, $4
FROM owner_notices n
LEFT JOIN owner_notice_attempts a ON a.kind = n.kind AND a.site = n.site
WHERE n.kind = $1 AND n.site = $2 AND n.notified_at IS NULL AND coalesce(a.retry_not_before <= $5, true)
FOR UPDATE OF n
ON CONFLICT (kind, site) DO NOTHING`

// ClaimNotice claims the open notice (kind, site) for by, at the wall-clock
// time at, so that by alone sends it. It returns false when the notice is
// not open, already sent, waiting for its retry time (passAt earlier than
// it), or claimed by another process. Nothing stays held after it returns:
// the claim is a committed row, let go by RecordDelivery.
func (s *Store) ClaimNotice(ctx context.Context, kind word.NoticeKind, site, by string, at, passAt time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, claimNoticeSQL, kind, site, by, instant(at), instant(passAt))
	if err != nil {
		return false, fmt.Errorf("store: claim notice %s/%s: %w", kind, site, translate(err))
	}
	return tag.RowsAffected() == 1, nil
}

// Each write below first deletes by's claim and acts only if it was there:
// a claim settled as stale, or a notice closed meanwhile, takes the late
// answer with it.
const recordNoticeSentSQL = `
WITH c AS (
    DELETE FROM owner_notice_claims WHERE kind = $1 AND site = $2 AND claimed_by = $3 RETURNING kind, site
), sent AS (
    UPDATE owner_notices n SET notified_at = $4 FROM c
    WHERE n.kind = c.kind AND n.site = c.site AND n.notified_at IS NULL RETURNING n.kind, n.site
)
DELETE FROM owner_notice_attempts a USING sent WHERE a.kind = sent.kind AND a.site = sent.site`

// recordNoticeUnknownSQL: the message went and no answer came. It counts as
// sent (so it is never posted again), and the attempt keeps why, marked
// sent_unknown: the owner reads it as "may not have arrived".
const recordNoticeUnknownSQL = `
WITH c AS (
    DELETE FROM owner_notice_claims WHERE kind = $1 AND site = $2 AND claimed_by = $3 RETURNING kind, site
), sent AS (
    UPDATE owner_notices n SET notified_at = $4 FROM c
    WHERE n.kind = c.kind AND n.site = c.site AND n.notified_at IS NULL RETURNING n.kind, n.site
)
INSERT INTO owner_notice_attempts (kind, site, attempts, last_attempt_at, last_error, retry_not_before, gave_up, sent_unknown)
SELECT sent.kind, sent.site, 1, $4, $5, NULL, false, true FROM sent
ON CONFLICT (kind, site) DO UPDATE SET
    attempts = owner_notice_attempts.attempts + 1,
    last_attempt_at = excluded.last_attempt_at,
    last_error = excluded.last_error,
    retry_not_before = NULL,
    gave_up = false,
    sent_unknown = true`

const recordNoticeAttemptSQL = `
WITH c AS (
    DELETE FROM owner_notice_claims WHERE kind = $1 AND site = $2 AND claimed_by = $3 RETURNING kind, site
)
INSERT INTO owner_notice_attempts (kind, site, attempts, last_attempt_at, last_error, retry_not_before, gave_up)
SELECT c.kind, c.site, 1, $4, $5, $6, $7 FROM c
ON CONFLICT (kind, site) DO UPDATE SET
    attempts = owner_notice_attempts.attempts + 1,
    last_attempt_at = excluded.last_attempt_at,
    last_error = excluded.last_error,
    retry_not_before = excluded.retry_not_before,
    gave_up = excluded.gave_up`

// RecordDelivery writes what by's claimed send did and lets the claim go:
// notified_at once Discord accepted or once a written request got no answer
// (clearing the failed attempts), else the failed attempt. It writes nothing when by no longer holds the claim.
func (s *Store) RecordDelivery(ctx context.Context, kind word.NoticeKind, site, by string, d Delivery) error {
	var err error
	switch {
	case !d.SentAt.IsZero() && d.Unknown:
		_, err = s.pool.Exec(ctx, recordNoticeUnknownSQL, kind, site, by, stamp(d.SentAt), d.Err)
	case !d.SentAt.IsZero():
		_, err = s.pool.Exec(ctx, recordNoticeSentSQL, kind, site, by, stamp(d.SentAt))
	default:
		_, err = s.pool.Exec(ctx, recordNoticeAttemptSQL, kind, site, by, instant(d.AttemptAt), d.Err, stamp(d.RetryNotBefore), d.GiveUp)
	}
	if err != nil {
		return fmt.Errorf("store: record notice %s/%s: %w", kind, site, translate(err))
	}
	return nil
}

// settleClaimSQL removes a claim taken before $3 and marks its notice sent
// at the claim's time, its outcome unknown: the process that took it stopped
// (or hung) between the claim and recording Discord's answer, so the message
// may have gone, and sending it again could tell the owner twice
// (docs/adr/0005).
const settleClaimSQL = `
WITH c AS (
    DELETE FROM owner_notice_claims WHERE kind = $1 AND site = $2 AND claimed_at < $3
    RETURNING kind, site, claimed_by, claimed_at
), sent AS (
    UPDATE owner_notices n SET notified_at = c.claimed_at FROM c
    WHERE n.kind = c.kind AND n.site = c.site AND n.notified_at IS NULL RETURNING n.kind, n.site, n.notified_at
), unknown AS (
    INSERT INTO owner_notice_attempts (kind, site, attempts, last_attempt_at, last_error, gave_up, sent_unknown)
    SELECT sent.kind, sent.site, 0, sent.notified_at, ` + "'" + settledReason + "'" + `, false, true FROM sent
    ON CONFLICT (kind, site) DO UPDATE SET
        last_attempt_at = excluded.last_attempt_at,
        last_error = excluded.last_error, retry_not_before = NULL, gave_up = false, sent_unknown = true
)
SELECT c.claimed_by, c.claimed_at FROM c`

// settledReason is the last error of a notice whose claim was settled; the
// settled send is not counted as an attempt (nothing answered it).
const settledReason = "the process sending it stopped before Discord answered"

// SettleStaleClaim settles the notice's claim if it was taken before
// olderThan (wall clock), returning who held it and when. ok is false when
// there was no such claim.
func (s *Store) SettleStaleClaim(ctx context.Context, kind word.NoticeKind, site string, olderThan time.Time) (by string, at time.Time, ok bool, err error) {
	err = s.pool.QueryRow(ctx, settleClaimSQL, kind, site, instant(olderThan)).Scan(&by, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", time.Time{}, false, nil
	}
	if err != nil {
		return "", time.Time{}, false, fmt.Errorf("store: settle notice claim %s/%s: %w", kind, site, translate(err))
	}
	return by, at, true, nil
}

// listNoticesSQL reads every open notice. owner_notices is bounded by
// construction (four kinds times six Sites, plus sidecar-down's one row), so
// reading it whole is reading at most 19 rows.
const listNoticesSQL = `
SELECT ` + noticeColumns + `
FROM owner_notices n` + noticeJoins + `
ORDER BY n.kind, n.site`

// Notices lists the open owner notices with their last failed delivery.
func (s *Store) Notices(ctx context.Context) ([]NoticeState, error) {
	v, err := getMany[NoticeState](ctx, s, listNoticesSQL)
	if err != nil {
		return nil, fmt.Errorf("store: list notices: %w", err)
	}
	return v, nil
}

// Notices queues the read of the open owner notices into dst.
func (b *Batch) Notices(dst *[]NoticeState) {
	queueMany(b, "list notices", dst, listNoticesSQL)
}

const deadWebhookSQL = `SELECT dead_at FROM dead_webhooks WHERE url_hash = $1`

// WebhookDeadAt returns when Discord answered 404 for the webhook whose
// address hashes to urlHash, or the zero time when it never did.
func (s *Store) WebhookDeadAt(ctx context.Context, urlHash string) (time.Time, error) {
	var at time.Time
	err := s.pool.QueryRow(ctx, deadWebhookSQL, urlHash).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("store: dead webhook: %w", translate(err))
	}
	return at, nil
}

const markWebhookDeadSQL = `INSERT INTO dead_webhooks (url_hash, dead_at) VALUES ($1, $2) ON CONFLICT (url_hash) DO NOTHING`

// MarkWebhookDead records that Discord answered 404 for this webhook, so no
// process sends to it again until the setting changes.
func (s *Store) MarkWebhookDead(ctx context.Context, urlHash string, at time.Time) error {
	if _, err := s.pool.Exec(ctx, markWebhookDeadSQL, urlHash, instant(at)); err != nil {
		return fmt.Errorf("store: mark webhook dead: %w", translate(err))
	}
	return nil
}
