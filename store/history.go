package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/word"
)

// This file holds the failing history (failing_history, migration 0024):
// each Site's failing figure once an hour, for the 7-day line on /admin
// (issue 23, item 11). The figure of today is a bounded read of series
// (ADR 0009); its past exists nowhere else, so the Lanes record it.

// HistoryWindow is how far back the failing line looks.
const HistoryWindow = 7 * 24 * time.Hour

// HistoryRetention is how long a row is kept: the window and a day, so an
// hour at the window's edge is never pruned before it leaves the line.
const HistoryRetention = HistoryWindow + 24*time.Hour

// recordFailingSQL writes one Site's failing figure for the hour starting
// at @hour, unless a row for that hour exists (a replica, or a restart
// within the hour, wrote it first), and deletes the Site's rows older than
// @keep through the primary key. The count is the failing list's own capped
// count (countSQL) for that one Site, so the line's newest point is the
// figure the list shows.
var recordFailingSQL = func() string {
	where, _, _ := SeriesQuery{Filter: FilterFailing, Site: "-"}.where(time.Time{}, false) // a known Filter
	return `
WITH gone AS (DELETE FROM failing_history WHERE site = @site AND at < @keep)
INSERT INTO failing_history (site, at, failing)
SELECT @site, @hour, ` + countSQL(where) + `
ON CONFLICT (site, at) DO NOTHING`
}()

// RecordFailing writes site's failing figure at now for now's hour (its
// start), once: wrote is false when that hour already had its row. It also
// prunes the Site's rows older than HistoryRetention. One statement.
func (s *Store) RecordFailing(ctx context.Context, site string, now time.Time) (wrote bool, err error) {
	_, args, _ := SeriesQuery{Filter: FilterFailing, Site: site}.where(now, false) // a known Filter
	args["site"], args["hour"], args["keep"] = site, instant(now.Truncate(time.Hour)), instant(now.Add(-HistoryRetention))
	args["cap"] = FigureCap + 1
	tag, err := s.exec(ctx, recordFailingSQL, args)
	if err != nil {
		return false, fmt.Errorf("store: record failing %s: %w", site, translate(err))
	}
	return tag.RowsAffected() == 1, nil
}

// FailingPoint is one recorded hour of the failing line: the sum of the
// Sites' figures recorded for it. Capped is true when a Site's figure was
// above FigureCap, so the sum is "at least".
type FailingPoint struct {
	At      time.Time `db:"at"`
	Failing int64     `db:"failing"`
	Capped  bool      `db:"capped"`
}

// failingHistorySQL reads the recorded hours of the window ending at @now
// for the Sites in @sites, one primary-key range per Site: at most
// 6 × 7 × 24 rows.
var failingHistorySQL = `
SELECT at, sum(failing)::bigint AS failing, bool_or(failing > ` + fmt.Sprint(FigureCap) + `) AS capped
  FROM failing_history
 WHERE site = ANY(@sites) AND at > @now::timestamptz - @history::interval AND at <= @now::timestamptz
 GROUP BY at
 ORDER BY at`

// firstRecordSQL is the first hour any of @sites recorded: when the
// server's records begin (the line starts there). One step of the primary
// key a Site.
const firstRecordSQL = `
SELECT min(f.at) FROM unnest(@sites::text[]) AS l(site)
 CROSS JOIN LATERAL (SELECT at FROM failing_history h WHERE h.site = l.site ORDER BY at LIMIT 1) f`

// historyArgs are failingHistorySQL's and firstRecordSQL's arguments at now.
func historyArgs(now time.Time) pgx.NamedArgs {
	return pgx.NamedArgs{"sites": word.SiteNames(), "now": instant(now), "history": HistoryWindow}
}

// FailingHistoryRead is the failing line's recorded hours, oldest first,
// and First, the first hour ever recorded (zero when none is): a line
// starts there. Read is false until the batch has read them (a batch stops
// at its first failure, so a page tells "not read" from "none").
type FailingHistoryRead struct {
	Points []FailingPoint
	First  time.Time
	Read   bool
}

// FailingHistory queues the failing line's recorded hours over the
// HistoryWindow ending at now into dst.
func (b *Batch) FailingHistory(now time.Time, dst *FailingHistoryRead) {
	b.b.Queue(failingHistorySQL, historyArgs(now)).Query(func(rows pgx.Rows) error {
		v, err := pgx.CollectRows(rows, pgx.RowToStructByName[FailingPoint])
		if err != nil {
			return fmt.Errorf("store: failing history: %w", translate(err))
		}
		dst.Points, dst.Read = v, true
		return nil
	})
}

// FailingHistory reads the failing line's recorded hours.
func (s *Store) FailingHistory(ctx context.Context, now time.Time) ([]FailingPoint, error) {
	var v FailingHistoryRead
	b := s.NewBatch()
	b.FailingHistory(now, &v)
	return v.Points, s.Send(ctx, b)
}
