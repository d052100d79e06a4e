package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/word"
)

// This file holds the pass log (poll_passes): one row per pass of a Lane.

// PassRow is one row of the pass log.
type PassRow struct {
	ID         int64     `db:"id"`
	Site       string    `db:"site"`
	StartedAt  time.Time `db:"started_at"`
	FinishedAt time.Time `db:"finished_at"`
	Due        int       `db:"due"`
	Checked    int       `db:"checked"`
	Skip       word.Skip `db:"skip"`
	// Counts holds one count per Outcome, one column each.
	word.Counts
	// ListingPass is what the pass's listing walk did (ADR 0016).
	ListingPass
}

// ListingPass is what one pass did with its Site's listing: the pages it
// read, the rows they named, the known Series it made urgent, and the
// outcome word of its last page ("" when it read none).
type ListingPass struct {
	Pages   int          `db:"listing_pages"`
	Entries int          `db:"listing_entries"`
	Marked  int          `db:"listing_marked"`
	Outcome word.Outcome `db:"listing_outcome"`
}

var insertPassSQL = `
INSERT INTO poll_passes (site, started_at, finished_at, due, checked, skip,
  listing_pages, listing_entries, listing_marked, listing_outcome, ` + outcomeColumns("") + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`

// InsertPass writes one pass-log row.
func (s *Store) InsertPass(ctx context.Context, r PassRow) error {
	args := []any{r.Site, instant(r.StartedAt), instant(r.FinishedAt), r.Due, r.Checked, r.Skip,
		r.ListingPass.Pages, r.ListingPass.Entries, r.ListingPass.Marked, r.ListingPass.Outcome}
	for _, o := range word.Outcomes {
		args = append(args, r.Of(o))
	}
	_, err := s.exec(ctx, insertPassSQL, args...)
	if err != nil {
		return fmt.Errorf("store: insert pass %s: %w", r.Site, translate(err))
	}
	return nil
}

var listPassesSQL = `
SELECT id, site, started_at, finished_at, due, checked, skip,
  listing_pages, listing_entries, listing_marked, listing_outcome, ` + outcomeColumns("") + `
FROM poll_passes WHERE site = $1 AND started_at >= $2 ORDER BY started_at, id`

// ListPasses returns site's pass-log rows started at or after since, oldest first.
func (s *Store) ListPasses(ctx context.Context, site string, since time.Time) ([]PassRow, error) {
	v, err := getMany[PassRow](ctx, s, listPassesSQL, site, instant(since))
	if err != nil {
		return nil, fmt.Errorf("store: list passes %s: %w", site, err)
	}
	return v, nil
}

// prunePassesSQL walks the (site, started_at) index: it touches only the
// rows it deletes, never the whole table.
const prunePassesSQL = `DELETE FROM poll_passes WHERE site = $1 AND started_at < $2`

// PrunePasses deletes site's pass-log rows started before before.
func (s *Store) PrunePasses(ctx context.Context, site string, before time.Time) (int64, error) {
	tag, err := s.exec(ctx, prunePassesSQL, site, instant(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune passes %s: %w", site, translate(err))
	}
	return tag.RowsAffected(), nil
}

// outcomeColumns lists the pass log's count columns, one per Outcome, in
// word.Outcomes order, qualified by alias ("" for none).
func outcomeColumns(alias string) string {
	cols := make([]string, len(word.Outcomes))
	for i, o := range word.Outcomes {
		cols[i] = o.Column(alias)
	}
	return strings.Join(cols, ", ")
}

// outcomeSums sums each count column over the rows of alias, named as the
// column.
func outcomeSums(alias string) string {
	cols := make([]string, len(word.Outcomes))
	for i, o := range word.Outcomes {
		cols[i] = "coalesce(sum(" + o.Column(alias) + "), 0)::bigint AS " + o.Column("")
	}
	return strings.Join(cols, ", ")
}

// outcomeTotal adds up one pass row's count columns: the Polls it counted.
func outcomeTotal(alias string) string {
	cols := make([]string, len(word.Outcomes))
	for i, o := range word.Outcomes {
		cols[i] = o.Column(alias)
	}
	return "(" + strings.Join(cols, " + ") + ")"
}

// The pass strip of the Lanes page (issue 23, item 11): a Lane's last day
// of passes in quarter hours, each with its passes and the outcomes of
// their Polls.
const (
	StripBuckets = 96
	StripBucket  = 15 * time.Minute
)

// PassBucket is one quarter hour of a Lane's passes: how many, how many
// were skipped (skip set) and how many were stall passes (CONTEXT.md,
// Stall), and their Polls' outcomes summed.
type PassBucket struct {
	Passes  int `db:"passes"`
	Skipped int `db:"skipped"`
	Stalled int `db:"stalled"`
	word.Counts
}

// Polls is how many Polls the bucket's passes made.
func (b PassBucket) Polls() int {
	n := 0
	for _, o := range word.Outcomes {
		n += b.Of(o)
	}
	return n
}

// PassStrip is one Lane's last StripBuckets quarter hours: Buckets[i]
// holds the passes started in the quarter hour ending
// (StripBuckets−1−i) × StripBucket before now, so the last is the newest.
type PassStrip struct {
	Buckets [StripBuckets]PassBucket
}

// passStripSQL reads the window's passes of the Sites in $1 by
// poll_passes_site_started, one range per Site, into one row per Site and
// quarter hour that had any. A pass skipped as not-leader is another
// replica declining the Lane, not a pass of it (CONTEXT.md, the owner-notice
// derivations), and is left out. A Lane passes every few minutes at most
// (MinRest bounds its pace), so the range is a few hundred rows a Site.
var passStripSQL = `
SELECT site, b, count(*) AS passes,
       count(*) FILTER (WHERE NOT ` + ran + `) AS skipped,
       count(*) FILTER (WHERE ` + stallPassPred + `) AS stalled,
       ` + outcomeSums("p") + `
  FROM (SELECT p.*, ` + fmt.Sprint(StripBuckets-1) + ` - floor(extract(epoch FROM $2::timestamptz - p.started_at) / ` +
	fmt.Sprint(StripBucket.Seconds()) + `)::int AS b
          FROM poll_passes p
         WHERE p.site = ANY($1) AND p.started_at > $2::timestamptz - $3::interval AND p.started_at <= $2::timestamptz
           AND p.skip <> ` + word.SkipNotLeader.SQL() + `) p
 GROUP BY site, b`

// passStripRow is one row of passStripSQL.
type passStripRow struct {
	Site string `db:"site"`
	B    int    `db:"b"`
	PassBucket
}

// PassStrips queues the pass strip of each of sites over the day ending at
// now into dst, keyed by Site; a Site without a pass has none. One
// statement.
func (b *Batch) PassStrips(sites []string, now time.Time, dst map[string]PassStrip) {
	b.b.Queue(passStripSQL, sites, instant(now), StripBuckets*StripBucket).Query(func(rows pgx.Rows) error {
		v, err := pgx.CollectRows(rows, pgx.RowToStructByName[passStripRow])
		if err != nil {
			return fmt.Errorf("store: pass strips: %w", translate(err))
		}
		for _, r := range v {
			if r.B < 0 || r.B >= StripBuckets {
				continue
			}
			s := dst[r.Site]
			s.Buckets[r.B] = r.PassBucket
			dst[r.Site] = s
		}
		return nil
	})
}

// PassStrip reads one Lane's pass strip over the day ending at now.
func (s *Store) PassStrip(ctx context.Context, site string, now time.Time) (PassStrip, error) {
	dst := map[string]PassStrip{}
	b := s.NewBatch()
	b.PassStrips([]string{site}, now, dst)
	if err := s.Send(ctx, b); err != nil {
		return PassStrip{}, err
	}
	return dst[site], nil
}

// unreachedPass is the predicate over the pass row alias: the pass ran,
// and every Poll in it that got as far as a fetch found the Site (on the
// plain route) or the sidecar (on the browser route) unreachable, so
// nothing was read (docs/adr/0022). The pages read it because unreachable
// writes no failure row (ADR 0003).
func unreachedPass(alias string) string {
	read := make([]string, 0, 5)
	for _, o := range []word.Outcome{word.OK, word.NoChapter, word.NotFound, word.Errors, word.Refused} {
		read = append(read, o.Column(alias))
	}
	return `(` + alias + `.skip = ` + word.SkipNone.SQL() + ` AND ` + word.Unreachable.Column(alias) + ` > 0 AND ` +
		strings.Join(read, " + ") + ` = 0)`
}

// newestDueSQL is each Site of $1's newest pass's due count, the Lanes
// page's "Last pass" due (0 for a Lane that never passed, and for a pass
// that skipped): one backward step of poll_passes_site_started a Site, as
// adminLanesSQL's last-pass lateral.
const newestDueSQL = `
SELECT l.site, coalesce(p.due, 0)::bigint AS due
  FROM unnest($1::text[]) AS l (site)
  LEFT JOIN LATERAL (
       SELECT due FROM poll_passes pp WHERE pp.site = l.site
        ORDER BY started_at DESC LIMIT 1) p ON TRUE`

// NewestDue queues each of sites' newest pass's due count into dst, keyed
// by Site: the metrics' due gauge (issue 25, item 5).
func (b *Batch) NewestDue(sites []string, dst map[string]int64) {
	b.b.Queue(newestDueSQL, sites).Query(func(rows pgx.Rows) error {
		var site string
		var due int64
		_, err := pgx.ForEachRow(rows, []any{&site, &due}, func() error {
			dst[site] = due
			return nil
		})
		if err != nil {
			return fmt.Errorf("store: newest due: %w", translate(err))
		}
		return nil
	})
}
