package store

import (
	"context"
	"fmt"
	"time"
)

// OwnerWindow is the one threshold for "persisting" (filters and notices).
const OwnerWindow = 12 * time.Hour

// Filter is one word of the Series list's filter vocabulary (SPEC.md).
type Filter string

// The filter vocabulary.
const (
	FilterAll           Filter = ""
	FilterNeverChecked  Filter = "never-checked"
	FilterStale         Filter = "stale"
	FilterUnpollable    Filter = "unpollable"
	FilterNoChapter     Filter = "no-chapter"
	FilterFailing       Filter = "failing"
	FilterUnverified    Filter = "unverified"
	FilterSiteCompleted Filter = "site-completed"
	FilterFinished      Filter = "finished"
	FilterOrphan        Filter = "orphan"
)

// failingPredicate: a failure row, a number that once came from somewhere,
// and a run of failures older than ownerWindow. latest_chapter_num IS NOT
// NULL keeps it disjoint from no-chapter. Deliberately no finished_at guard:
// a Series finished while failing keeps its evidence (seed 001).
const failingPredicate = `f.series_id IS NOT NULL AND s.latest_chapter_num IS NOT NULL AND f.failing_since < p.cutoff`

// filterPredicates are fixed SQL fragments chosen by a known word, never
// built from input. p.cutoff is now - ownerWindow.
var filterPredicates = map[Filter]string{
	FilterAll:          `true`,
	FilterNeverChecked: `s.checked_at = 0 AND s.finished_at = 0`,
	FilterStale:        `s.checked_at > 0 AND s.checked_at < p.cutoff AND s.finished_at = 0`,
	// The fetch-gate half of unpollable (an address the adapters refuse)
	// cannot be judged in SQL; the caller adds those rows.
	FilterUnpollable:    `s.url = '' AND s.finished_at = 0`,
	FilterNoChapter:     `s.checked_at > 0 AND s.latest_chapter_num IS NULL AND s.finished_at = 0`,
	FilterFailing:       failingPredicate,
	FilterUnverified:    `s.latest_raised_by IS NOT NULL AND ` + failingPredicate,
	FilterSiteCompleted: `s.site_completed_at > 0 AND s.finished_at = 0`,
	FilterFinished:      `s.finished_at > 0`,
	FilterOrphan:        `NOT EXISTS (SELECT 1 FROM bookmarks b WHERE b.site = s.site AND b.series_id = s.series_id)`,
}

// Valid reports whether f is a word of the vocabulary.
func (f Filter) Valid() bool { _, ok := filterPredicates[f]; return ok }

// SeriesRow is a Series as the admin list shows it: with its failure row's
// word and age when it has one.
type SeriesRow struct {
	Series
	FailureOutcome *string `db:"failure_outcome"`
	FailingSince   *int64  `db:"failing_since"`
}

// adminSeriesSQL joins the failure row (the admin read model, not the due
// query, is where that join belongs).
const adminSeriesSQL = `
SELECT s.site, s.series_id, s.url, s.title, s.cover_url, s.kind,
	s.latest_chapter_num::text AS latest_chapter, s.latest_chapter_url, s.latest_raised_by,
	s.checked_at, s.force_poll_at, s.finished_at, s.site_completed_at, s.created_at,
	f.outcome AS failure_outcome, f.failing_since
FROM (SELECT $3::bigint AS cutoff) p,
	series s LEFT JOIN poll_failures f ON f.site = s.site AND f.series_id = s.series_id
WHERE ($1 = '' OR s.site = $1) AND ($2 = '' OR s.kind = $2) AND (%s)
ORDER BY s.site, s.series_id`

// AdminSeries lists the Series matching one filter, optionally narrowed to a
// Site and a kind ("" = any), in (site, series_id) order.
func (s *Store) AdminSeries(ctx context.Context, f Filter, site, kind string, now time.Time) ([]SeriesRow, error) {
	pred, ok := filterPredicates[f]
	if !ok {
		return nil, fmt.Errorf("store: admin series: unknown filter %q", f)
	}
	sql := fmt.Sprintf(adminSeriesSQL, pred)
	v, err := getMany[SeriesRow](ctx, s, sql, site, kind, now.Add(-OwnerWindow).UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("store: admin series %s: %w", f, err)
	}
	return v, nil
}
