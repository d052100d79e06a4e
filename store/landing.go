package store

import (
	"fmt"
	"maps"
	"time"

	"github.com/jackc/pgx/v5"
)

// LandingFigures is everything /admin reads from the Series and their
// history, besides the conditions: the figures (AdminStats), the verdict's
// young facts with each Lane's reach and listing (Young), the freshness
// figure with its count no listing named first (FreshnessAll, as the Lanes
// keep it: RefreshFreshnessFigure) and the failing line with the hour its
// records begin (FailingHistory). Read is false until the batch has read
// them.
type LandingFigures struct {
	Stats   map[Filter]int64
	Young   Young
	Fresh   Delays
	Failing FailingHistoryRead
	Read    bool
}

// landingSQL is the four reads as one statement: each keeps its own SQL,
// as a sub-select, so each keeps its own plan and bound (ADR 0009), and the
// page pays one statement for them instead of four. The freshness figure
// is the Lanes' kept copy (landingFreshnessSQL). The failing line's hours
// arrive as three parallel arrays, oldest first.
func landingSQL(statsCols string) string {
	return `SELECT ` + statsCols + `,
	y.series, y.sites, y.unreached, y.outcomes, y.failing, y.empty, f.n, f.median, f.p95, f.unlisted,
	coalesce(h.at, '{}'), coalesce(h.failing, '{}'), coalesce(h.capped, '{}'), (` + firstRecordSQL + `)
  FROM (` + youngSQL + `) y,
       (` + landingFreshnessSQL + `) f,
       (SELECT array_agg(at ORDER BY at) AS at, array_agg(failing ORDER BY at) AS failing,
               array_agg(capped ORDER BY at) AS capped
          FROM (` + failingHistorySQL + `) hh) h`
}

// Landing queues /admin's figures at now into dst, in one statement.
func (b *Batch) Landing(now time.Time, dst *LandingFigures) {
	cols, args := statsColumns(now)
	maps.Copy(args, youngArgs(now))
	args["now"], args["window"], args["history"] = instant(now), FreshnessWindow, HistoryWindow
	args["stale"] = instant(now.Add(-FreshnessFigureStale))
	vals := make([]int64, len(Filters))
	var median, p95 *float64
	var at []time.Time
	var failing []int64
	var capped []bool
	var first *time.Time
	var y youngRow
	dest := append(append(statsDest(vals), y.dest(&dst.Young)...), &dst.Fresh.N, &median, &p95, &dst.Fresh.Unlisted,
		&at, &failing, &capped, &first)
	b.b.Queue(landingSQL(cols), args).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(dest...); err != nil {
			return fmt.Errorf("store: landing figures: %w", translate(err))
		}
		dst.Stats = map[Filter]int64{}
		statsInto(dst.Stats, vals)
		y.into(&dst.Young)
		dst.Fresh.Median, dst.Fresh.P95 = seconds(median), seconds(p95)
		dst.Failing = FailingHistoryRead{Read: true}
		for i := range at {
			dst.Failing.Points = append(dst.Failing.Points, FailingPoint{At: at[i], Failing: failing[i], Capped: capped[i]})
		}
		if first != nil {
			dst.Failing.First = *first
		}
		dst.Read = true
		return nil
	})
}
