package store

import (
	"context"
	"fmt"
	"time"

	"github.com/mangabookmark/mangabookmark/word"
)

// This file holds what a Lane's listing read writes (ADR 0016): the Series
// it makes urgent, and the Lane's own listing state. A listing read never
// writes a Series' Latest Chapter, failure row or completion hint: only a
// read of the Series' own page does (CONTEXT.md, Listing).

// Listed is one row of a listing: a Series id of the Lane's Site and the
// chapter number the row names.
type Listed struct {
	SeriesID string
	Chapter  string
}

// markListedSQL records a listing's numbers on the Series it names that
// someone tracks, are pollable, and stand below the named number, unless
// the listing already named this number or a higher one: the first sight
// is the one kept (the delay is measured from it), and a Series page that
// lags behind its listing costs one read per new number, not one per
// listing read. A Series the listing names but nobody tracks is ignored.
const markListedSQL = `
UPDATE series s SET listed_chapter_num = e.num, listed_at = $4
FROM (SELECT id, max(num::numeric) AS num
        FROM unnest($2::text[], $3::text[]) AS u(id, num) GROUP BY id) e
WHERE s.site = $1 AND s.series_id = e.id
  AND s.finished_at IS NULL AND s.url <> '' AND s.bookmark_count > 0
  AND e.num > coalesce(s.latest_chapter_num, -1)
  AND (s.listed_chapter_num IS NULL OR s.listed_chapter_num < e.num)`

// MarkListed records one listing page's rows on the Series they name
// (markListedSQL) and returns how many it made urgent: one statement for
// the page. Every number must be a chapter number (word.ParseChapter).
func (s *Store) MarkListed(ctx context.Context, site string, rows []Listed, seen time.Time) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	ids, nums := make([]string, len(rows)), make([]string, len(rows))
	for i, r := range rows {
		ids[i], nums[i] = r.SeriesID, r.Chapter
	}
	tag, err := s.exec(ctx, markListedSQL, site, ids, nums, instant(seen))
	if err != nil {
		return 0, fmt.Errorf("store: mark listed %s: %w", site, translate(err))
	}
	return int(tag.RowsAffected()), nil
}

// recordListingSQL keeps the Lane's listing state from one attempt ($2 its
// time, $3 its outcome word, $6 whether it failed, $7 whether it named a
// Series): the attempt itself, and since when attempts have failed, kept
// from the first of the run across restarts. A read the Site answered also
// moves when it was last read, last named a Series, and since when every
// read named none; a failed one leaves those alone, as it says nothing
// about the listing reader (a Broken listing, ADR 0016).
const recordListingSQL = `
UPDATE poll_lanes SET listing_tried_at = $2, listing_outcome = $3, listing_entries = $4, listing_marked = $5,
       listing_failing_since = CASE WHEN $6 THEN coalesce(listing_failing_since, $2) END,
       listing_read_at = CASE WHEN $6 THEN listing_read_at ELSE $2 END,
       listing_ok_at = CASE WHEN $7 THEN $2 ELSE listing_ok_at END,
       listing_empty_since = CASE WHEN $6 THEN listing_empty_since WHEN $7 THEN NULL
                                  ELSE coalesce(listing_empty_since, $2) END
WHERE site = $1`

// RecordListing records one listing attempt on the Lane's row, whatever
// it ended in (recordListingSQL): one statement a walk.
// Its TriedAt is when the walk began; FailingSince is not read.
func (s *Store) RecordListing(ctx context.Context, site string, a ListingAttempt) error {
	failed := a.Outcome.ListingFailed()
	named := a.Outcome == word.OK && a.Entries > 0
	if _, err := s.exec(ctx, recordListingSQL, site, instant(a.TriedAt), a.Outcome, a.Entries, a.Marked, failed, named); err != nil {
		return fmt.Errorf("store: record listing %s: %w", site, translate(err))
	}
	return nil
}

// pruneArrivalsSQL walks chapter_arrivals_site_confirmed: it touches only
// the rows it deletes.
const pruneArrivalsSQL = `DELETE FROM chapter_arrivals WHERE site = $1 AND confirmed_at < $2`

// PruneArrivals deletes site's Arrivals confirmed before cutoff.
func (s *Store) PruneArrivals(ctx context.Context, site string, cutoff time.Time) (int64, error) {
	tag, err := s.exec(ctx, pruneArrivalsSQL, site, instant(cutoff))
	if err != nil {
		return 0, fmt.Errorf("store: prune arrivals %s: %w", site, translate(err))
	}
	return tag.RowsAffected(), nil
}
