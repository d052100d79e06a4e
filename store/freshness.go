package store

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// This file holds the freshness figures (issue 20, "Show it"): how long the
// new chapters of the last day waited between the first evidence they
// existed and the Poll that confirmed them (chapter_arrivals, migration
// 0017), and how old the least recently checked Series of a Site is (a
// check is a Poll attempted, reached or not: CONTEXT.md, Check).

// FreshnessWindow is how far back the freshness figures look.
const FreshnessWindow = 24 * time.Hour

// FreshnessHours is the number of hourly buckets of a Lane's plot.
const FreshnessHours = 24

// Delays are the detection delays (confirmed_at − noticed_at) of a set of
// Arrivals: how many, their median and their 95th percentile (continuous,
// as PostgreSQL's percentile_cont interpolates); the delays are zero when
// N is.
type Delays struct {
	N           int64
	Median, P95 time.Duration
	// Unlisted is, of the N, those no listing named first: found by the
	// Series' own reads or a Sighting (chapter_arrivals.listed). Only the
	// landing's figure reads it.
	Unlisted int64
}

// Freshness is one Lane's freshness over the FreshnessWindow ending now.
type Freshness struct {
	Delays
	// Hours[i] holds the Arrivals confirmed in the hour that ends
	// FreshnessHours−1−i hours before now: Hours[23] is the last hour.
	Hours [FreshnessHours]Delays
	// Pollable is false when the Site has no Series that is not Finished
	// and has an address: then there is no oldest check.
	Pollable bool
	// OldestCheck is the oldest check among those Series; the zero time
	// when one of them was never checked.
	OldestCheck time.Time
}

// NeverChecked reports whether a pollable Series of the Site was never checked.
func (f Freshness) NeverChecked() bool { return f.Pollable && f.OldestCheck.IsZero() }

// delaySQL is an Arrival's detection delay in seconds; a noticed_at after
// confirmed_at (a clock step between replicas) counts as no delay.
const delaySQL = `greatest(extract(epoch FROM confirmed_at - noticed_at), 0)::float8`

// delaysSQL aggregates the d column of the rows it reads into Delays' columns.
const delaysSQL = `count(*) AS n,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY d) AS median,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY d) AS p95`

// sitesFreshnessSQL reads the window's Arrivals of the Sites in $1 into one
// row per Site and hour that had any and, by the rollup, one row (h NULL)
// per Site for its whole window. The window is a range of
// chapter_arrivals_confirmed (the Lanes page asks for every Site: one read
// of the last day) or, for one Site, of chapter_arrivals_site_confirmed;
// the planner picks, and either reads the last day only.
var sitesFreshnessSQL = `
SELECT site, h, ` + delaysSQL + `
  FROM (SELECT site, ` + strconv.Itoa(FreshnessHours-1) + ` - floor(extract(epoch FROM $2::timestamptz - confirmed_at) / 3600)::int AS h,
               ` + delaySQL + ` AS d
          FROM chapter_arrivals
         WHERE site = ANY($1) AND confirmed_at > $2::timestamptz - $3::interval AND confirmed_at <= $2::timestamptz) a
 GROUP BY site, ROLLUP (h)`

// allFreshnessSQL is every Site's Arrivals of the window ending at @now,
// by chapter_arrivals_confirmed: the landing page's one figure.
const allFreshnessSQL = `
SELECT ` + delaysSQL + `, count(*) FILTER (WHERE NOT listed) AS unlisted
  FROM (SELECT ` + delaySQL + ` AS d, listed
          FROM chapter_arrivals
         WHERE confirmed_at > @now::timestamptz - @window::interval AND confirmed_at <= @now::timestamptz) a`

// seconds is a delay read as float seconds (NULL for none) as a Duration,
// to the millisecond the stamps are kept to.
func seconds(s *float64) time.Duration {
	if s == nil {
		return 0
	}
	return time.Duration(math.Round(*s*1000)) * time.Millisecond
}

// oldestChecksSQL is the Lane's own rest probe (nextCheckSQL: the oldest
// check among a Site's pollable Series, NULL for one never checked, one probe
// of series_due) for each Site of $1, in one statement.
const oldestChecksSQL = `
SELECT s.site, o.m IS NOT NULL AS pollable, CASE WHEN o.m > timestamptz '-infinity' THEN o.m END AS oldest
  FROM unnest($1::text[]) AS s (site)
 CROSS JOIN LATERAL (
       SELECT min(` + dueKey + `) AS m FROM series
        WHERE series.site = s.site AND ` + pollable + `) o`

// Freshness queues the freshness of each of sites over the window ending
// at now into dst, keyed by Site, in two statements whatever the number of
// Sites: their Arrivals by hour, and each Site's oldest check among its
// pollable Series (oldestChecksSQL).
func (b *Batch) Freshness(sites []string, now time.Time, dst map[string]Freshness) {
	b.b.Queue(sitesFreshnessSQL, sites, instant(now), FreshnessWindow).Query(func(rows pgx.Rows) error {
		var site string
		var h *int
		var n int64
		var median, p95 *float64
		_, err := pgx.ForEachRow(rows, []any{&site, &h, &n, &median, &p95}, func() error {
			f, d := dst[site], Delays{N: n, Median: seconds(median), P95: seconds(p95)}
			switch {
			case h == nil:
				f.Delays = d
			case *h >= 0 && *h < FreshnessHours:
				f.Hours[*h] = d
			}
			dst[site] = f
			return nil
		})
		if err != nil {
			return fmt.Errorf("store: freshness: %w", translate(err))
		}
		return nil
	})
	b.OldestChecks(sites, dst)
}

// OldestChecks queues, for each of sites, whether it has a pollable Series
// and the oldest check among them (oldestChecksSQL: one index probe a Site)
// into dst's Pollable and OldestCheck; the Lanes page reads it with the
// freshness, the metrics' oldest-check gauge alone.
func (b *Batch) OldestChecks(sites []string, dst map[string]Freshness) {
	b.b.Queue(oldestChecksSQL, sites).Query(func(rows pgx.Rows) error {
		var site string
		var pollable bool
		var oldest time.Time
		_, err := pgx.ForEachRow(rows, []any{&site, &pollable, &oldest}, func() error {
			f := dst[site]
			f.Pollable, f.OldestCheck = pollable, oldest
			dst[site] = f
			return nil
		})
		if err != nil {
			return fmt.Errorf("store: oldest checks: %w", translate(err))
		}
		return nil
	})
}

// FreshnessAll queues the landing page's figure into dst: every Site's
// Arrivals over the window ending at now.
func (b *Batch) FreshnessAll(now time.Time, dst *Delays) {
	var median, p95 *float64
	b.b.Queue(allFreshnessSQL, pgx.NamedArgs{"now": instant(now), "window": FreshnessWindow}).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(&dst.N, &median, &p95, &dst.Unlisted); err != nil {
			return fmt.Errorf("store: freshness: %w", translate(err))
		}
		dst.Median, dst.P95 = seconds(median), seconds(p95)
		return nil
	})
}

// Freshness reads one Lane's freshness over the window ending at now.
func (s *Store) Freshness(ctx context.Context, site string, now time.Time) (Freshness, error) {
	dst := map[string]Freshness{}
	b := s.NewBatch()
	b.Freshness([]string{site}, now, dst)
	if err := s.Send(ctx, b); err != nil {
		return Freshness{}, err
	}
	return dst[site], nil
}

// FreshnessAll reads every Site's Arrivals over the window ending at now.
func (s *Store) FreshnessAll(ctx context.Context, now time.Time) (Delays, error) {
	var d Delays
	b := s.NewBatch()
	b.FreshnessAll(now, &d)
	if err := s.Send(ctx, b); err != nil {
		return Delays{}, err
	}
	return d, nil
}

// The landing's figure is kept in freshness_figure (migration 0035): a
// Lane's leader recomputes it after a pass once FreshnessFigureEvery has
// passed, and /admin reads the row while it is younger than
// FreshnessFigureStale, so the page never reads the day's Arrivals while a
// Lane runs (ADR 0009).
const (
	FreshnessFigureEvery = time.Minute
	FreshnessFigureStale = 5 * time.Minute
)

// refreshFreshnessSQL recomputes the figure when it is older than @due.
// The row is taken FOR UPDATE SKIP LOCKED, so of the Lanes that finish a
// pass together one computes and the others skip; the EXISTS is a
// one-time filter, so a figure not yet due reads no Arrival.
const refreshFreshnessSQL = `
WITH due AS MATERIALIZED (SELECT one FROM freshness_figure WHERE computed_at <= @due FOR UPDATE SKIP LOCKED)
UPDATE freshness_figure ff SET computed_at = @now, n = f.n, median_s = f.median, p95_s = f.p95, unlisted = f.unlisted
  FROM (` + allFreshnessSQL + `) f
 WHERE ff.one AND EXISTS (SELECT 1 FROM due)`

// RefreshFreshnessFigure recomputes the landing's freshness figure at now
// unless it was computed less than FreshnessFigureEvery ago; done says
// whether this call computed it. One statement.
func (s *Store) RefreshFreshnessFigure(ctx context.Context, now time.Time) (done bool, err error) {
	tag, err := s.exec(ctx, refreshFreshnessSQL, pgx.NamedArgs{"due": instant(now.Add(-FreshnessFigureEvery)),
		"now": instant(now), "window": FreshnessWindow})
	if err != nil {
		return false, fmt.Errorf("store: refresh freshness figure: %w", translate(err))
	}
	return tag.RowsAffected() == 1, nil
}

// landingFreshnessSQL is the landing's figure: the kept row while it is
// younger than @stale, else computed from the Arrivals. The kept row comes
// first under the LIMIT, so while it holds the Arrivals are never read.
const landingFreshnessSQL = `
SELECT n, median, p95, unlisted FROM (
  SELECT n, median_s AS median, p95_s AS p95, unlisted FROM freshness_figure WHERE computed_at > @stale
  UNION ALL (` + allFreshnessSQL + `)) k
 LIMIT 1`
