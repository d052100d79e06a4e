package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/store/word"
)

// Filter is one of the ten names of the owner's Series list (SPEC.md, "The
// owner surface"). The empty Filter is "every Series".
type Filter string

// The filter vocabulary, in the order the owner surface shows it (the
// informational tail, site-completed beside finished, last).
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

// Filters lists all ten, in display order.
var Filters = []Filter{
	FilterAll, FilterNeverChecked, FilterStale, FilterUnpollable, FilterNoChapter,
	FilterFailing, FilterUnverified, FilterSiteCompleted, FilterFinished, FilterOrphan,
}

// failingSQL is seed 001's failing test: the joined failure row exists, the
// Series once yielded a chapter (which keeps it disjoint from no-chapter),
// and the run of failures began more than ownerWindow ago. Deliberately no
// finished_at guard: a Finished Series keeps its evidence.
const failingSQL = `(f.site IS NOT NULL AND s.latest_chapter_num IS NOT NULL AND f.failing_since < @cutoff)`

// predicates is the one place each filter is defined. Every list query and
// every figure is built from these strings, so a figure cannot disagree with
// its list. Each reads series as s and the LEFT JOINed failure row as f;
// @cutoff is now − ownerWindow in unix ms.
//
// "unpollable" reads SPEC.md's "its address fails the fetch gate" as: the
// last Poll that learned anything ended in unfetchable (the gate refused the
// stored address), i.e. the failure row says 'unfetchable'. The admin surface
// never fetches and so cannot run the gate itself; the failure row is where
// the gate's verdict on a stored address is kept. It is written only for
// addresses the adapters reject, so this is exact for every Series polled at
// least once since its address last changed.
var predicates = map[Filter]string{
	FilterAll:          `TRUE`,
	FilterNeverChecked: `(s.checked_at = 0 AND s.finished_at = 0)`,
	FilterStale:        `(s.checked_at > 0 AND s.checked_at < @cutoff AND s.finished_at = 0)`,
	// Written as a key set rather than "url = '' OR <failure row>": an OR
	// across two tables defeats every index, while each arm of the UNION
	// reads its own small partial index (series_no_address,
	// poll_failures_unfetchable).
	FilterUnpollable: `(s.finished_at = 0 AND (s.site, s.series_id) IN (
		SELECT a.site, a.series_id FROM series a WHERE a.url = '' AND a.finished_at = 0
		UNION ALL
		SELECT u.site, u.series_id FROM poll_failures u WHERE u.outcome = ` + word.Unfetchable.SQL() + `))`,
	FilterNoChapter:     `(s.checked_at > 0 AND s.latest_chapter_num IS NULL AND s.finished_at = 0)`,
	FilterFailing:       failingSQL,
	FilterUnverified:    `(s.latest_raised_by IS NOT NULL AND ` + failingSQL + `)`,
	FilterSiteCompleted: `(s.site_completed_at > 0 AND s.finished_at = 0)`,
	FilterFinished:      `(s.finished_at > 0)`,
	// bookmark_count is kept by a trigger on bookmarks (migration 0005), so
	// orphans have their own partial index (series_orphan).
	FilterOrphan: `(s.bookmark_count = 0)`,
}

// customPlan runs a filter query as an unnamed statement, so PostgreSQL
// plans it for the actual cutoff, Site and cursor every time. A cached
// prepared statement drifts to a generic plan after five runs, and a generic
// plan cannot tell that "failing_since < $cutoff" or a deep keyset cursor is
// selective: BenchmarkSeriesList measured a deep failing page at 340–470 ms
// with the cached statement and about 1 ms with custom plans, at 50 000 Series.
var customPlan = pgx.QueryExecModeExec

// ParseFilter accepts a filter name from a query string.
func ParseFilter(name string) (Filter, bool) {
	f := Filter(name)
	_, ok := predicates[f]
	return f, ok
}

// AdminSeries is the admin read model of one Series: the Series, the
// failure row's outcome word and failing-since (seed 001: "SeriesRow gains
// the outcome word and the failing-since timestamp"; "" and 0 when there is
// no failure row), and the name of the Reader who raised Latest Chapter.
type AdminSeries struct {
	Series
	FailureOutcome word.Outcome `db:"failure_outcome"`
	FailingSince   time.Time    `db:"failing_since"`
	RaisedByName   string       `db:"raised_by_name"`
}

const adminSeriesColumns = `s.site, s.series_id, s.url, s.title, s.cover_url, s.kind,
	s.latest_chapter_num::text AS latest_chapter, s.latest_chapter_url, s.latest_raised_by,
	s.checked_at, s.force_poll_at, s.finished_at, s.site_completed_at, s.created_at,
	coalesce(f.outcome, '') AS failure_outcome, coalesce(f.failing_since, 0) AS failing_since,
	coalesce(r.name, '') AS raised_by_name`

const adminFrom = `series s
	LEFT JOIN poll_failures f ON f.site = s.site AND f.series_id = s.series_id`

// SeriesQuery is one page request of the owner's Series list. Site and Kind
// stack on the Filter; AfterSite/AfterID is the keyset cursor (the last row
// of the previous page), empty for the first page.
type SeriesQuery struct {
	Filter    Filter
	Site      string
	Kind      string
	AfterSite string
	AfterID   string
	Limit     int
}

// where builds the WHERE clause: the filter's predicate plus the stacked
// site/kind equalities. Conditions are added only when present, so each
// query the planner sees has a plain shape it can match to a partial index.
func (q SeriesQuery) where(now time.Time, keyset bool) (string, pgx.NamedArgs, error) {
	pred, ok := predicates[q.Filter]
	if !ok {
		return "", nil, fmt.Errorf("store: unknown filter %q", q.Filter)
	}
	conds := []string{pred}
	args := pgx.NamedArgs{"cutoff": ms(now.Add(-word.OwnerWindow))}
	if q.Site != "" {
		conds = append(conds, `s.site = @site`)
		args["site"] = q.Site
	}
	if q.Kind != "" {
		conds = append(conds, `s.kind = @kind`)
		args["kind"] = q.Kind
	}
	if keyset && (q.AfterSite != "" || q.AfterID != "") {
		conds = append(conds, keysetSQL("s"))
		if q.Filter == FilterFailing || q.Filter == FilterUnverified {
			// These lists are driven from the failure table; the same cursor
			// on its key lets that scan start at the page instead of at the
			// first failure row (the predicate already requires the row).
			conds = append(conds, keysetSQL("f"))
		}
		args["after_site"], args["after_id"] = q.AfterSite, q.AfterID
	}
	return strings.Join(conds, " AND "), args, nil
}

// keysetSQL is the cursor condition on one table's (site, series_id). The
// row comparison alone is not enough: PostgreSQL 15 uses it as the start of
// an index range but, inside a nested loop that also fixes site, does not
// see that a site before the cursor's can hold nothing, and walks the index
// to its end for every outer row (BenchmarkSeriesList: a deep failing or
// unpollable page took 380–470 ms at 50 000 Series). The redundant
// "site >= cursor site" is a plain scalar bound the index scan checks
// against its equality on site, so such a probe ends at once.
func keysetSQL(alias string) string {
	return `(` + alias + `.site >= @after_site AND (` + alias + `.site, ` + alias + `.series_id) > (@after_site, @after_id))`
}

// AdminSeriesPage is one page of the list; More says a next page exists.
type AdminSeriesPage struct {
	Rows []AdminSeries
	More bool
}

// ListAdminSeries returns one page of the filtered list in (site, series_id)
// order, keyset-paginated: the cursor is a row-value comparison on the
// primary key order, so page 1000 costs what page 1 costs.
//
// Plans at 50 000 Series (BenchmarkSeriesList seeds them; EXPLAIN in
// TestEveryFilterListAvoidsASeqScanOfSeries), none a sequential scan of series:
//   - all, site, kind:   Index Scan on series_pkey (or series_kind) with the
//     keyset as an index condition, stopping at the limit.
//   - never-checked, no-chapter, site-completed, finished: Index Scan on the
//     filter's partial index (site, series_id), same keyset condition.
//   - stale:             Bitmap/Index Scan on series_stale (checked_at range),
//     then a top-N sort of the few stale rows.
//   - failing/unverified: Index Scan on poll_failures_since (failing_since <
//     cutoff), nested loop into series_pkey, top-N sort.
//   - unpollable:        the key set (Index Only Scans of series_no_address
//     and poll_failures_unfetchable, hashed) Merge Joined against
//     series_pkey in keyset order, stopping at the limit.
//   - orphan:            Index Scan on series_orphan in keyset order,
//     stopping at the limit.
//
// Measured (BenchmarkSeriesList, 50 000 Series, first page and a deep page,
// on an idle machine): most filters 0.5–1.5 ms; unpollable about 2 ms, whose
// key set is sparse in keyset order; a deep failing or unverified page about
// 4 ms, which joins and sorts the failure rows after the cursor (see
// keysetSQL for the 400 ms this once cost).
func (s *Store) ListAdminSeries(ctx context.Context, q SeriesQuery, now time.Time) (AdminSeriesPage, error) {
	if q.Limit <= 0 || q.Limit > 500 {
		q.Limit = 50
	}
	sql, args, err := q.listSQL(now)
	if err != nil {
		return AdminSeriesPage{}, err
	}
	rows, err := getMany[AdminSeries](ctx, s, sql, customPlan, args)
	if err != nil {
		return AdminSeriesPage{}, fmt.Errorf("store: list admin series %q: %w", q.Filter, err)
	}
	page := AdminSeriesPage{Rows: rows}
	if len(rows) > q.Limit {
		page.Rows, page.More = rows[:q.Limit], true
	}
	return page, nil
}

// listSQL is the list statement (the page's keys first, then the read
// model joined onto just those rows) and its arguments.
func (q SeriesQuery) listSQL(now time.Time) (string, pgx.NamedArgs, error) {
	where, args, err := q.where(now, true)
	if err != nil {
		return "", nil, err
	}
	args["limit"] = q.Limit + 1
	sql := `SELECT ` + adminSeriesColumns + ` FROM (
		SELECT s.site, s.series_id FROM ` + adminFrom + `
		 WHERE ` + where + `
		 ORDER BY s.site, s.series_id LIMIT @limit) page
	JOIN series s ON s.site = page.site AND s.series_id = page.series_id
	LEFT JOIN poll_failures f ON f.site = s.site AND f.series_id = s.series_id
	LEFT JOIN readers r ON r.discord_id = s.latest_raised_by
	ORDER BY s.site, s.series_id`
	return sql, args, nil
}

// CountAdminSeries is the figure of one filter (site and kind stack as on
// the list). It uses the very predicate the list uses.
func (s *Store) CountAdminSeries(ctx context.Context, q SeriesQuery, now time.Time) (int64, error) {
	where, args, err := q.where(now, false)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+adminFrom+` WHERE `+where, customPlan, args).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count admin series %q: %w", q.Filter, translate(err))
	}
	return n, nil
}

// FigureCap bounds every figure of the landing stats block: a figure counts
// at most FigureCap+1 rows of its list and the page prints "1000+" above the
// cap. So no figure ever reads a whole table, at 50 000 Series or at
// 1 000 000, whatever its predicate — and each is still computed from the
// same predicate as its list.
const FigureCap = 1000

// AdminStats is every figure of the landing stats block, keyed by filter.
// A value above FigureCap means "more than FigureCap".
//
// One round trip, one scalar subquery per filter, each built from the same
// predicate string as its list and stopped by LIMIT after FigureCap+1 rows.
// Each one walks the filter's own partial index (never-checked, no-chapter,
// site-completed, finished, stale, orphan), old failure rows through
// poll_failures_since (failing, unverified), series_no_address plus
// poll_failures_unfetchable (unpollable), or the table itself (every Series),
// and the LIMIT bounds the walk.
//
// Measured: see the "stats" case of BenchmarkSeriesList (make bench).
func (s *Store) AdminStats(ctx context.Context, now time.Time) (map[Filter]int64, error) {
	cols := make([]string, len(Filters))
	for i, f := range Filters {
		cols[i] = `(SELECT count(*) FROM (SELECT 1 FROM ` + adminFrom + ` WHERE ` + predicates[f] + ` LIMIT @cap) capped)`
	}
	args := pgx.NamedArgs{"cutoff": ms(now.Add(-word.OwnerWindow)), "cap": FigureCap + 1}
	vals := make([]int64, len(Filters))
	dest := make([]any, len(Filters))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := s.pool.QueryRow(ctx, `SELECT `+strings.Join(cols, ",\n"), customPlan, args).Scan(dest...); err != nil {
		return nil, fmt.Errorf("store: admin stats: %w", translate(err))
	}
	out := make(map[Filter]int64, len(Filters))
	for i, f := range Filters {
		out[f] = vals[i]
	}
	return out, nil
}

// AdminSeriesDetail is one Series for its detail page, with the filters the
// page states a sentence for, computed by the same predicates as the lists.
type AdminSeriesDetail struct {
	AdminSeries
	Failing    bool `db:"failing"`
	Unverified bool `db:"unverified"`
	Bookmarks  int  `db:"bookmarks"`
}

// GetAdminSeries returns one Series' detail or ErrNotFound.
func (s *Store) GetAdminSeries(ctx context.Context, site, id string, now time.Time) (AdminSeriesDetail, error) {
	sql := `SELECT ` + adminSeriesColumns + `,
		` + predicates[FilterFailing] + ` AS failing,
		` + predicates[FilterUnverified] + ` AS unverified,
		s.bookmark_count AS bookmarks
	  FROM ` + adminFrom + `
	  LEFT JOIN readers r ON r.discord_id = s.latest_raised_by
	 WHERE s.site = @site AND s.series_id = @id`
	args := pgx.NamedArgs{"site": site, "id": id, "cutoff": ms(now.Add(-word.OwnerWindow))}
	v, err := getOne[AdminSeriesDetail](ctx, s, sql, customPlan, args)
	if err != nil {
		return AdminSeriesDetail{}, fmt.Errorf("store: get admin series %s/%s: %w", site, id, err)
	}
	return v, nil
}

// SeriesBookmark is one Reader's Bookmark on a Series, for the detail page.
type SeriesBookmark struct {
	ReaderID   string    `db:"reader_id"`
	ReaderName string    `db:"reader_name"`
	Progress   *string   `db:"progress"`
	UpdatedAt  time.Time `db:"updated_at"`
}

const seriesBookmarksSQL = `
SELECT b.reader_id, coalesce(r.name, '') AS reader_name, b.progress_num::text AS progress, b.updated_at
  FROM bookmarks b JOIN readers r ON r.discord_id = b.reader_id
 WHERE b.site = $1 AND b.series_id = $2
 ORDER BY r.name, b.reader_id`

// SeriesBookmarks lists the Bookmarks on one Series.
func (s *Store) SeriesBookmarks(ctx context.Context, site, id string) ([]SeriesBookmark, error) {
	v, err := getMany[SeriesBookmark](ctx, s, seriesBookmarksSQL, site, id)
	if err != nil {
		return nil, fmt.Errorf("store: bookmarks of %s/%s: %w", site, id, err)
	}
	return v, nil
}

const finishSeriesSQL = `
UPDATE series SET finished_at = CASE WHEN finished_at = 0 THEN $3 ELSE finished_at END
 WHERE site = $1 AND series_id = $2`

// FinishSeries sets the owner's Finished flag (kept if already set). Only
// the owner's confirmed Finish control calls it; nothing else writes it.
func (s *Store) FinishSeries(ctx context.Context, site, id string, now time.Time) error {
	return s.execOne(ctx, "finish series "+site+"/"+id, finishSeriesSQL, site, id, ms(now))
}

var unfinishSeriesSQL = wakeSQL(`UPDATE series SET finished_at = 0 WHERE site = $1 AND series_id = $2 RETURNING site`)

// UnfinishSeries clears the Finished flag and wakes the Lane: the Series is
// due again.
func (s *Store) UnfinishSeries(ctx context.Context, site, id string) error {
	return s.execWake(ctx, "unfinish series "+site+"/"+id, unfinishSeriesSQL, site, id)
}

// execOne runs one statement that must touch exactly one row.
func (s *Store) execOne(ctx context.Context, what, sql string, args ...any) error {
	tag, err := s.pool.Exec(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: %s: %w", what, ErrNotFound)
	}
	return nil
}

// AdminLane is one row of the Lanes page: the Lane's own row, its outcome
// counts over ownerWindow, and its newest pass (LastStartedAt 0 when the
// Lane has never passed).
type AdminLane struct {
	Site        string    `db:"site"`
	PausedUntil time.Time `db:"paused_until"`
	RefuseUntil time.Time `db:"refuse_until"`
	ForcePollAt time.Time `db:"force_poll_at"`

	Passes int64 `db:"passes"`
	word.Counts

	LastStartedAt  time.Time `db:"last_started_at"`
	LastFinishedAt time.Time `db:"last_finished_at"`
	LastDue        int64     `db:"last_due"`
	LastChecked    int64     `db:"last_checked"`
	LastSkip       word.Skip `db:"last_skip"`
}

// Both laterals ride poll_passes_site_started (site, started_at): a range
// scan of ownerWindow for the counts, one backward index step for the last
// pass. Neither reads passes older than the window.
var adminLanesSQL = `
SELECT l.site, l.paused_until, l.refuse_until, l.force_poll_at,
       c.passes, ` + outcomeColumns("c") + `,
       coalesce(p.started_at, 0) AS last_started_at, coalesce(p.finished_at, 0) AS last_finished_at,
       coalesce(p.due, 0)::bigint AS last_due, coalesce(p.checked, 0)::bigint AS last_checked,
       coalesce(p.skip, '') AS last_skip
  FROM poll_lanes l
  CROSS JOIN LATERAL (
       SELECT count(*) AS passes, ` + outcomeSums("pp") + `
         FROM poll_passes pp WHERE pp.site = l.site AND pp.started_at >= $1) c
  LEFT JOIN LATERAL (
       SELECT started_at, finished_at, due, checked, skip
         FROM poll_passes pp WHERE pp.site = l.site
        ORDER BY started_at DESC LIMIT 1) p ON TRUE
 ORDER BY l.site`

// AdminLanes reads every Lane for the Lanes page; counts cover
// (now − ownerWindow, now].
func (s *Store) AdminLanes(ctx context.Context, now time.Time) ([]AdminLane, error) {
	v, err := getMany[AdminLane](ctx, s, adminLanesSQL, ms(now.Add(-word.OwnerWindow)))
	if err != nil {
		return nil, fmt.Errorf("store: admin lanes: %w", err)
	}
	return v, nil
}
