package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/word"
)

// Filter is one of the names of the owner's Series list (CONTEXT.md, "The
// filters of the owner's Series list"): the ten with a landing figure, and
// the one an owner notice links to. The empty Filter is "every Series".
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
	// FilterYieldsNoChapter is the Series the adapter-broken condition
	// counts; it has no landing figure (the verdict line names the
	// condition), only the list its message and the verdict link to.
	FilterYieldsNoChapter Filter = "yields-no-chapter"
)

// Filters lists the ten with a landing figure, in display order.
var Filters = []Filter{
	FilterAll, FilterNeverChecked, FilterStale, FilterUnpollable, FilterNoChapter,
	FilterFailing, FilterUnverified, FilterSiteCompleted, FilterFinished, FilterOrphan,
}

// ListFilters lists every filter the list page offers: the ten, then
// yields-no-chapter.
var ListFilters = append(slices.Clone(Filters), FilterYieldsNoChapter)

// failingSQL is the failing filter (CONTEXT.md, Rules: Failing filter): the Series holds a failure row
// (its failing_since, copied onto series by migration 0009's triggers, is
// set exactly while the row exists), it once yielded a chapter (which keeps
// it disjoint from no-chapter), and the run of failures began more than
// ownerWindow ago. Deliberately no finished_at guard: a Finished Series
// keeps its evidence.
//
// A time compared with the cutoff is not NULL, so the comparison alone
// says the row exists, and it implies the partial indexes' "IS NOT NULL"
// (migration 0016). Writing "IS NOT NULL" beside it would make the planner
// count the NULL fraction twice and take a failing list for a few rows.
const failingSQL = `(s.latest_chapter_num IS NOT NULL AND s.failing_since < @cutoff)`

// unverifiedSQL is the unverified filter (CONTEXT.md, the unverified
// filter): a Reader's Sighting raised Latest Chapter (the attribution goes
// when a Poll reads that number or more), and either the Series is failing
// or the raise is more than ownerWindow old, so reads that succeed keep
// showing less. Its index, series_unverified (migration 0020), holds the
// raised rows with both times, so each arm is read from the index alone.
const unverifiedSQL = `(s.latest_raised_by IS NOT NULL AND s.latest_chapter_num IS NOT NULL AND ` +
	`(s.failing_since < @cutoff OR s.sighted_at < @cutoff))`

// yieldsNoChapterSQL is the adapter-broken condition's count (CONTEXT.md,
// adapter-broken; store/notices.go, adapterBrokenExpr) as a list: not
// Finished, with an address, and a no_chapter failure row at least
// ownerWindow old, whether or not the Series ever yielded a chapter (so
// neither failing nor no-chapter holds exactly these). Its index,
// series_yields_no_chapter (migration 0038), is led by (site, series_id)
// with the condition's own predicate.
var yieldsNoChapterSQL = `(s.failure_outcome = ` + word.NoChapter.SQL() +
	` AND s.finished_at IS NULL AND s.url <> '' AND s.failing_since <= @cutoff)`

// predicates is the one place each filter is defined. Every list query,
// every figure and every caption count is built from these strings, so a
// figure cannot disagree with its list. Each reads one table, series as s
// (the failure row's word and age are on it, migration 0009), and each has
// a partial index whose predicate is its own text; @cutoff is
// now − ownerWindow.
//
// "unpollable" reads "its address fails the fetch gate" (CONTEXT.md, Rules: Unpollable) as: the
// last Poll that learned anything ended in unfetchable (the gate refused the
// stored address), i.e. the failure row says 'unfetchable'. The admin surface
// never fetches and so cannot run the gate itself; the failure row is where
// the gate's verdict on a stored address is kept. It is written only for
// addresses the adapters reject, so this is exact for every Series polled at
// least once since its address last changed.
// neverReadSQL and noChapterSQL split the Series without a chapter by
// whether a Poll ever reached the page (CONTEXT.md, "never read" and "no
// chapter"). A Poll that reached the page either yields a chapter or writes
// a failure row; a refused or unreachable Poll stamps checked_at and writes
// nothing (ADR 0003, ADR 0022), so a Series whose Site was never reached
// has a check stamp but no failure row (an empty failure_outcome) and no
// chapter: it is never read, not "no chapter", whose sentence blames the
// address or the adapter.
// "never read" asks whether a read ever showed a number
// (polled_chapter_num), not whether Latest Chapter holds one: Readers'
// Sightings and the owner's Correction fill that without a Poll reaching
// the page (CONTEXT.md, Sighting).
// Migrations 0028 and 0033 keep each one's partial index on this exact text.
const (
	neverReadSQL = `(s.finished_at IS NULL AND (s.checked_at IS NULL OR (s.polled_chapter_num IS NULL AND s.failure_outcome = '')))`
	noChapterSQL = `(s.checked_at IS NOT NULL AND s.latest_chapter_num IS NULL AND s.finished_at IS NULL AND s.failure_outcome <> '')`
)

var predicates = map[Filter]string{
	FilterAll:           `TRUE`,
	FilterNeverChecked:  neverReadSQL,
	FilterStale:         `(s.checked_at < @cutoff AND s.finished_at IS NULL)`,
	FilterUnpollable:    `(s.finished_at IS NULL AND (s.url = '' OR s.failure_outcome = ` + word.Unfetchable.SQL() + `))`,
	FilterNoChapter:     noChapterSQL,
	FilterFailing:       failingSQL,
	FilterUnverified:    unverifiedSQL,
	FilterSiteCompleted: `(s.site_completed_at IS NOT NULL AND s.finished_at IS NULL)`,
	FilterFinished:      `(s.finished_at IS NOT NULL)`,
	// bookmark_count is kept by a trigger on bookmarks (migration 0005), so
	// orphans have their own partial index (series_orphan).
	FilterOrphan:          `(s.bookmark_count = 0)`,
	FilterYieldsNoChapter: yieldsNoChapterSQL,
}

// ParseFilter accepts a filter name from a query string.
func ParseFilter(name string) (Filter, bool) {
	f := Filter(name)
	_, ok := predicates[f]
	return f, ok
}

// AdminSeries is the admin read model of one Series: the Series, the
// failure row's outcome word and failing-since (CONTEXT.md, Rules: Admin read model: "SeriesRow gains
// the outcome word and the failing-since timestamp"; "" and the zero time when there is
// no failure row), and the name of the Reader who raised Latest Chapter.
type AdminSeries struct {
	Series
	FailureOutcome word.Outcome `db:"failure_outcome"`
	FailingSince   time.Time    `db:"failing_since"`
	RaisedByName   string       `db:"raised_by_name"`
	// PolledOnce: a read of the page once showed a chapter number
	// (polled_chapter_num is set).
	PolledOnce bool `db:"polled_once"`
}

// Reached reports whether a Poll ever reached the page: it showed a
// number, or left a failure row. A Series checked only by refused or
// unreachable Polls was never read (neverReadSQL's rule, row by row).
func (s AdminSeries) Reached() bool { return s.PolledOnce || s.FailureOutcome != "" }

const adminSeriesColumns = `s.site, s.series_id, s.url, s.title, s.cover_url, s.cover_tried, s.kind,
	s.latest_chapter_num::text AS latest_chapter, s.latest_chapter_url, s.latest_raised_by,
	s.checked_at, s.force_poll_at, s.finished_at, s.site_completed_at, s.created_at,
	s.failure_outcome, s.failing_since, coalesce(r.name, '') AS raised_by_name,
	s.polled_chapter_num IS NOT NULL AS polled_once`

// SeriesQuery is one page request of the owner's Series list. Site, Kind
// and the title search Q stack on the Filter; Sort orders it (admin_sort.go).
// AfterSite/AfterID is the keyset cursor: the last row of the previous page,
// or with Before the first row of the next one (paging back); empty for the
// first page.
type SeriesQuery struct {
	Filter    Filter
	Site      string
	Kind      string
	Q         string
	Sort      Sort
	AfterSite string
	AfterID   string
	Before    bool
	Limit     int
}

// where builds the WHERE clause: the filter's predicate plus the stacked
// site/kind equalities. Conditions are added only when present, so each
// query the planner sees has a plain shape it can match to a partial index.
//
// Every count, and every list of one Site or one kind, names the Sites it
// reads with "s.site = ANY(@sites)": one Site, the Sites of the kind asked
// for, or all six. A Series' kind is its
// Site's (each adapter has one kind, and CreateSeries writes it), so the
// kind is read as its Sites and never as a second condition the planner
// could answer by intersecting the kind's whole key set. Every index is led
// by site, so PostgreSQL reads one range per named Site and a capped count
// stops after its cap; without the list, a range on the second column would
// walk the whole index.
func (q SeriesQuery) where(now time.Time, keyset bool) (string, pgx.NamedArgs, error) {
	pred, ok := predicates[q.Filter]
	if !ok {
		return "", nil, fmt.Errorf("store: unknown filter %q", q.Filter)
	}
	conds := []string{pred}
	args := pgx.NamedArgs{"cutoff": instant(now.Add(-word.OwnerWindow))}
	switch {
	case keyset && q.oneSiteSort():
		conds = append(conds, `s.site = @site`)
		args["site"] = q.Site
	case !keyset || q.Site != "" || q.Kind != "":
		// A list of every Site walks its index in keyset order and needs no
		// ranges; naming all six would make PostgreSQL 15 descend the index
		// once per Site before the cursor (BENCHMARKS.md, "all, deep page").
		conds = append(conds, `s.site = ANY(@sites)`)
		args["sites"] = q.sites()
	}
	if q.Q != "" {
		conds = append(conds, searchSQL)
		args["q"] = likePattern(q.Q)
	}
	if keyset && (q.AfterSite != "" || q.AfterID != "") {
		conds = append(conds, q.cursorSQL())
		args["after_site"], args["after_id"] = q.AfterSite, q.AfterID
	}
	return strings.Join(conds, " AND "), args, nil
}

// sites is the Sites a query reads: its Site, or every Site, kept to those
// of its kind. A Site of the other kind yields none, so the list is empty.
func (q SeriesQuery) sites() []string {
	all := word.SiteNames()
	if q.Site != "" {
		all = []string{q.Site}
	}
	out := []string{}
	for _, site := range all {
		if q.Kind == "" || string(word.Site(site).Kind()) == q.Kind {
			out = append(out, site)
		}
	}
	return out
}

// keysetSQL is the cursor condition on one table's (site, series_id). The
// row comparison alone is not enough: PostgreSQL 15 uses it as the start of
// an index range but, inside a nested loop that also fixes site, does not
// see that a site before the cursor's can hold nothing, and walks the index
// to its end for every outer row (BenchmarkSeriesList shows the cost of a
// deep page). The redundant
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
// primary key order, so page 1000 costs what page 1 costs. Every filter
// walks an index in that order (series_pkey, series_kind, or the filter's
// own partial index) and stops at the limit; TestEveryFigureIsBounded holds
// each plan to that.
func (s *Store) ListAdminSeries(ctx context.Context, q SeriesQuery, now time.Time) (AdminSeriesPage, error) {
	var page AdminSeriesPage
	b := s.NewBatch()
	if err := b.ListAdminSeries(q, now, &page); err != nil {
		return AdminSeriesPage{}, err
	}
	return page, s.Send(ctx, b)
}

// listSQL is the list statement and its arguments.
func (q SeriesQuery) listSQL(now time.Time) (string, pgx.NamedArgs, error) {
	if q.Limit <= 0 || q.Limit > 500 {
		q.Limit = 50
	}
	where, args, err := q.where(now, true)
	if err != nil {
		return "", nil, err
	}
	args["limit"] = q.Limit + 1
	sql := `SELECT ` + adminSeriesColumns + `
	  FROM series s LEFT JOIN readers r ON r.discord_id = s.latest_raised_by
	 WHERE ` + where + `
	 ORDER BY ` + q.orderSQL() + ` LIMIT @limit`
	return sql, args, nil
}

// FigureCap bounds every figure and every caption count: each counts at
// most FigureCap+1 rows of its list, and the pages print "1000+" above the
// cap. So no figure ever reads more than a few thousand index entries, at
// 50 000 Series or at 1 000 000, whatever its predicate, and the landing
// figure and the list caption of one filter are the same statement.
const FigureCap = 1000

// countSQL is one capped figure: the filter's own predicate, stopped after
// FigureCap+1 rows.
func countSQL(where string) string {
	return `(SELECT count(*) FROM (SELECT 1 FROM series s WHERE ` + where + ` LIMIT @cap) capped)`
}

// CountAdminSeries is the caption count of one list (site and kind stack as
// on the list): exact up to FigureCap, FigureCap+1 meaning "more".
func (s *Store) CountAdminSeries(ctx context.Context, q SeriesQuery, now time.Time) (int64, error) {
	var n int64
	b := s.NewBatch()
	if err := b.CountAdminSeries(q, now, &n); err != nil {
		return 0, err
	}
	return n, s.Send(ctx, b)
}

// AdminStats is every figure of the landing stats block, keyed by filter;
// each is the very statement the list's caption runs, so they agree. A
// value above FigureCap means "more than FigureCap".
func (s *Store) AdminStats(ctx context.Context, now time.Time) (map[Filter]int64, error) {
	out := map[Filter]int64{}
	b := s.NewBatch()
	b.AdminStats(now, out)
	return out, s.Send(ctx, b)
}

// Young is what the landing's "too early to tell" reads besides the
// conditions' runs (CONTEXT.md, Verdict line), and what it reads of each
// Lane's reach and listing.
type Young struct {
	// Series is the Series, not Finished, whose run of failures began less
	// than ownerWindow ago: exact up to FigureCap, FigureCap+1 meaning more.
	Series int64
	// Lanes is every Lane's reach and listing, in Site order.
	Lanes []LaneReach
}

// LaneReach is what the database holds of one Lane's requests to its Site
// (migration 0034), each the zero value for NULL: since when every pass
// that asked the Site anything reached nothing (docs/adr/0022; a listing
// page counts as a Poll does), and its listing's last attempt, failing run
// and empty run (a Broken listing, ADR 0016).
type LaneReach struct {
	Site                string
	UnreachedSince      time.Time
	ListingOutcome      word.Outcome
	ListingFailingSince time.Time
	ListingEmptySince   time.Time
}

// youngSQL reads Young in one statement. The count's predicate implies
// series_failing_young's (migration 0025), so it is one index-only range
// per Site, stopped after the cap like every figure; the Lanes' facts are
// columns of poll_lanes, one row a Site, kept by the Lanes and the pass
// log's trigger: a scan of six rows, in place of the newest-pass probe a
// plain Site this statement made before.
var youngSQL = `SELECT
	(SELECT count(*) FROM (SELECT 1 FROM series s
	  WHERE s.site = ANY(@sites) AND s.failing_since >= @cutoff AND s.finished_at IS NULL
	  LIMIT @cap) capped) AS series,
	l.sites, l.unreached, l.outcomes, l.failing, l.empty
	FROM (SELECT coalesce(array_agg(site ORDER BY site), '{}') AS sites,
	             coalesce(array_agg(unreached_since ORDER BY site), '{}') AS unreached,
	             coalesce(array_agg(listing_outcome ORDER BY site), '{}') AS outcomes,
	             coalesce(array_agg(listing_failing_since ORDER BY site), '{}') AS failing,
	             coalesce(array_agg(listing_empty_since ORDER BY site), '{}') AS empty
	        FROM poll_lanes) l`

// Young queues the verdict's young facts at now into dst.
func (b *Batch) Young(now time.Time, dst *Young) {
	var y youngRow
	b.b.Queue(youngSQL, youngArgs(now)).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(y.dest(dst)...); err != nil {
			return fmt.Errorf("store: young: %w", translate(err))
		}
		y.into(dst)
		return nil
	})
}

// youngArgs are youngSQL's arguments at now.
func youngArgs(now time.Time) pgx.NamedArgs {
	return pgx.NamedArgs{"sites": word.SiteNames(), "cutoff": instant(now.Add(-word.OwnerWindow)), "cap": FigureCap + 1}
}

// youngRow is youngSQL's row as scanned: the count into Young itself, each
// Lane's facts as parallel arrays in Site order (Young and Landing read the
// same columns).
type youngRow struct {
	sites, outcomes           []string
	unreached, failing, empty []*time.Time
}

// dest is where youngSQL's columns scan to, in their order.
func (y *youngRow) dest(dst *Young) []any {
	return []any{&dst.Series, &y.sites, &y.unreached, &y.outcomes, &y.failing, &y.empty}
}

// into sets dst's Lanes from the scanned arrays, a NULL stamp the zero time.
func (y *youngRow) into(dst *Young) {
	at := func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return *t
	}
	dst.Lanes = dst.Lanes[:0]
	for i, site := range y.sites {
		dst.Lanes = append(dst.Lanes, LaneReach{Site: site, UnreachedSince: at(y.unreached[i]),
			ListingOutcome: word.Outcome(y.outcomes[i]), ListingFailingSince: at(y.failing[i]), ListingEmptySince: at(y.empty[i])})
	}
}

// AdminSeriesDetail is one Series for its detail page, with the filters the
// page states a sentence for, computed by the same predicates as the lists.
type AdminSeriesDetail struct {
	AdminSeries
	Failing    bool `db:"failing"`
	Unverified bool `db:"unverified"`
	Bookmarks  int  `db:"bookmarks"`
	// Unreached is true when the pass that held the Series' last Poll
	// reached nothing, its Polls unreachable: that Poll wrote no failure row
	// (ADR 0003), and this is how the page still names it (docs/adr/0022).
	// A pass still running has no row yet, so its Polls read false.
	Unreached bool `db:"unreached"`
}

// GetAdminSeries returns one Series' detail or ErrNotFound.
func (s *Store) GetAdminSeries(ctx context.Context, site, id string, now time.Time) (AdminSeriesDetail, error) {
	var v AdminSeriesDetail
	b := s.NewBatch()
	b.AdminSeries(site, id, now, &v)
	return v, s.Send(ctx, b)
}

var adminSeriesSQL = `SELECT ` + adminSeriesColumns + `,
		coalesce(` + predicates[FilterFailing] + `, false) AS failing,
		coalesce(` + predicates[FilterUnverified] + `, false) AS unverified,
		s.bookmark_count AS bookmarks,
		coalesce((SELECT ` + unreachedPass("pp") + ` AND pp.finished_at >= s.checked_at
		            FROM poll_passes pp
		           WHERE pp.site = s.site AND pp.started_at <= s.checked_at
		           ORDER BY pp.started_at DESC LIMIT 1), false) AS unreached
	  FROM series s
	  LEFT JOIN readers r ON r.discord_id = s.latest_raised_by
	 WHERE s.site = @site AND s.series_id = @id`

// AdminSeries queues one Series' detail into dst; Send returns ErrNotFound
// when there is no such Series.
func (b *Batch) AdminSeries(site, id string, now time.Time, dst *AdminSeriesDetail) {
	args := pgx.NamedArgs{"site": site, "id": id, "cutoff": instant(now.Add(-word.OwnerWindow))}
	b.b.Queue(adminSeriesSQL, args).Query(func(rows pgx.Rows) error {
		v, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByNameLax[AdminSeriesDetail])
		if err != nil {
			return fmt.Errorf("store: get admin series %s/%s: %w", site, id, translate(err))
		}
		*dst = v
		return nil
	})
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
	var v []SeriesBookmark
	b := s.NewBatch()
	b.SeriesBookmarks(site, id, &v)
	return v, s.Send(ctx, b)
}

// SeriesBookmarks queues the Bookmarks on one Series into dst.
func (b *Batch) SeriesBookmarks(site, id string, dst *[]SeriesBookmark) {
	queueMany(b, "bookmarks of "+site+"/"+id, dst, seriesBookmarksSQL, site, id)
}

const finishSeriesSQL = `
UPDATE series SET finished_at = coalesce(finished_at, $3)
 WHERE site = $1 AND series_id = $2`

// FinishSeries sets the owner's Finished flag (kept if already set). Only
// the owner's confirmed Finish control calls it; nothing else writes it.
func (s *Store) FinishSeries(ctx context.Context, site, id string, now time.Time) error {
	return s.execOne(ctx, "finish series "+site+"/"+id, finishSeriesSQL, site, id, stamp(now))
}

var unfinishSeriesSQL = wakeSQL(`UPDATE series SET finished_at = NULL WHERE site = $1 AND series_id = $2 RETURNING site`)

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
// counts over ownerWindow, and its newest pass (LastStartedAt the zero time when the
// Lane has never passed).
type AdminLane struct {
	Site        string    `db:"site"`
	PausedUntil time.Time `db:"paused_until"`
	RefuseUntil time.Time `db:"refuse_until"`
	ForcePollAt time.Time `db:"force_poll_at"`
	// The Lane's listing state (migration 0017), each the zero time for
	// NULL: the last listing read, the last that named any Series, and
	// since when every read parsed to nothing (schedule.Broken reads it).
	ListingReadAt     time.Time `db:"listing_read_at"`
	ListingOKAt       time.Time `db:"listing_ok_at"`
	ListingEmptySince time.Time `db:"listing_empty_since"`
	// The listing's last attempt (migration 0034).
	ListingAttempt
	// UnreachedSince is since when every pass of the Lane that asked its
	// Site anything, a listing page included, reached nothing (migration
	// 0034, docs/adr/0022); zero once one was answered.
	UnreachedSince time.Time `db:"unreached_since"`
	// Pollable is the Lane's size: its Series not Finished and with an
	// address (site_tallies), the Series its reads share out.
	Pollable int64 `db:"pollable"`

	Passes int64 `db:"passes"`
	word.Counts

	LastStartedAt  time.Time `db:"last_started_at"`
	LastFinishedAt time.Time `db:"last_finished_at"`
	LastDue        int64     `db:"last_due"`
	LastChecked    int64     `db:"last_checked"`
	// LastPolled is the Polls the newest pass counted, every outcome
	// included: its Checked is only those the Site answered, so a pass whose
	// reads all failed before an answer reads "1 polled, 0 answered".
	LastPolled int64     `db:"last_polled"`
	LastSkip   word.Skip `db:"last_skip"`
	// PauseServed is true once a pass that started at or after the current
	// Pause was asked for was skipped as paused (CONTEXT.md, Pause); a Pause
	// from before migration 0014 reads as served.
	PauseServed bool `db:"pause_served"`
	// UnledSince is when the Lane's last lease ended, on the page's clock,
	// when nobody has led it since for longer than that holder's pace (ADR
	// 0018; the lease's age is read on the database's clock, as
	// store.unledExpr does); zero while it is led, or not yet that long.
	UnledSince time.Time `db:"unled_since"`
	// UnledPace is that pace.
	UnledPaceS int64 `db:"unled_pace_s"`
}

// The laterals ride poll_passes_site_started (site, started_at): a range
// scan of ownerWindow for the counts, one backward index step for the last
// pass, and for a Pause the passes since it was asked for (the first that
// honours it ends the read).
var adminLanesSQL = `
SELECT l.site, l.paused_until, l.refuse_until, l.force_poll_at,
       l.listing_read_at, l.listing_ok_at, l.listing_empty_since,
       l.listing_tried_at, l.listing_outcome, l.listing_entries, l.listing_marked, l.listing_failing_since,
       l.unreached_since, coalesce(t.pollable, 0)::bigint AS pollable,
       c.passes, ` + outcomeColumns("c") + `,
       p.started_at AS last_started_at, p.finished_at AS last_finished_at,
       coalesce(p.due, 0)::bigint AS last_due, coalesce(p.checked, 0)::bigint AS last_checked,
       coalesce(p.skip, '') AS last_skip, coalesce(p.polled, 0)::bigint AS last_polled,
       coalesce(ps.served, l.paused_at IS NULL) AS pause_served,
       CASE WHEN ll.expires_at + ll.pace_s * interval '1 second' <= now()
            THEN $2::timestamptz - (now() - ll.expires_at) END AS unled_since,
       coalesce(ll.pace_s, 0)::bigint AS unled_pace_s
  FROM poll_lanes l
  LEFT JOIN lane_leases ll ON ll.site = l.site
  LEFT JOIN site_tallies t ON t.site = l.site
  CROSS JOIN LATERAL (
       SELECT count(*) AS passes, ` + outcomeSums("pp") + `
         FROM poll_passes pp WHERE pp.site = l.site AND pp.started_at >= $1) c
  LEFT JOIN LATERAL (
       SELECT started_at, finished_at, due, checked, skip, ` + outcomeTotal("pp") + ` AS polled
         FROM poll_passes pp WHERE pp.site = l.site
        ORDER BY started_at DESC LIMIT 1) p ON TRUE
  LEFT JOIN LATERAL (
       SELECT TRUE AS served
         FROM poll_passes pp WHERE pp.site = l.site AND l.paused_at IS NOT NULL AND pp.started_at >= l.paused_at
          AND pp.skip = ` + word.SkipPaused.SQL() + `
        ORDER BY started_at LIMIT 1) ps ON TRUE
 ORDER BY l.site`

// AdminLanes queues the Lanes page's read of every Lane into dst; counts
// cover (now − ownerWindow, now].
func (b *Batch) AdminLanes(now time.Time, dst *[]AdminLane) {
	queueMany(b, "admin lanes", dst, adminLanesSQL, instant(now.Add(-word.OwnerWindow)), instant(now))
}
