package store

import (
	"context"
	"fmt"
	"time"
)

// SeriesKey names one Series.
type SeriesKey struct{ Site, ID string }

func splitKeys(keys []SeriesKey) (sites, ids []string) {
	for _, k := range keys {
		sites, ids = append(sites, k.Site), append(ids, k.ID)
	}
	return sites, ids
}

const keysFrom = `unnest($1::text[], $2::text[]) AS k(site, series_id)`

// AdminSeriesByKeys reads the Series the owner selected on the list, in the
// list's own order; a key that names no Series is left out.
func (s *Store) AdminSeriesByKeys(ctx context.Context, keys []SeriesKey) ([]AdminSeries, error) {
	sites, ids := splitKeys(keys)
	v, err := getMany[AdminSeries](ctx, s, `SELECT `+adminSeriesColumns+`, s.bookmark_count
	  FROM `+keysFrom+`
	  JOIN series s ON s.site = k.site AND s.series_id = k.series_id
	  LEFT JOIN readers r ON r.discord_id = s.latest_raised_by
	 ORDER BY s.site, s.series_id`, sites, ids)
	if err != nil {
		return nil, fmt.Errorf("store: selected series: %w", err)
	}
	return v, nil
}

// FinishMany sets the Finished flag on every selected Series in one
// statement (a flag already set keeps its time), after the owner confirmed
// the batch. It reports how many Series it found.
func (s *Store) FinishMany(ctx context.Context, keys []SeriesKey, now time.Time) (int64, error) {
	sites, ids := splitKeys(keys)
	tag, err := s.pool.Exec(ctx, `UPDATE series s SET finished_at = coalesce(s.finished_at, $3)
	  FROM `+keysFrom+` WHERE s.site = k.site AND s.series_id = k.series_id`, sites, ids, stamp(now))
	if err != nil {
		return 0, fmt.Errorf("store: finish selected: %w", translate(err))
	}
	return tag.RowsAffected(), nil
}

// ForceMany records a Forced Poll of every selected Series and wakes each
// Lane concerned once, in one statement. It reports how many it found.
func (s *Store) ForceMany(ctx context.Context, keys []SeriesKey, now time.Time) (int64, error) {
	sites, ids := splitKeys(keys)
	var n int64
	err := s.pool.QueryRow(ctx, `WITH u AS (
	    UPDATE series s SET force_poll_at = $3 FROM `+keysFrom+`
	     WHERE s.site = k.site AND s.series_id = k.series_id RETURNING s.site),
	  w AS (SELECT pg_notify('`+LaneWakeChannel+`', d.site) FROM (SELECT DISTINCT site FROM u) d)
	SELECT (SELECT count(*) FROM u) + 0 * (SELECT count(*) FROM w)`, sites, ids, stamp(now)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: force selected: %w", translate(err))
	}
	return n, nil
}
