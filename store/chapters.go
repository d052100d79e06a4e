package store

import (
	"context"
	"fmt"
	"time"

	"github.com/mangabookmark/mangabookmark/word"
)

// The three writers of Latest Chapter besides the Poll (store/poll.go).
// None of them touches poll_failures: a Reader's report and the owner's
// typed number are not reads of the page (CONTEXT.md, Rules: Only a Poll
// reads the page).

// raiseLatestSQL raises Latest Chapter to a Sighting's number when it is
// higher (compared as numeric: 12.5 sits between 12 and 13) and within the
// Sighting bound, records the Reader who raised it and when, and wakes the
// Series' Lane: a raised Series is read next, right after Forced Polls, so
// a Poll confirms or contradicts the Sighting at once (ADR 0016).
//
// The bound is the highest number a read of the page has shown plus $7
// (word.SightingReach); a Series no read has shown a number for has none
// (CONTEXT.md, Sighting). The second column is the bound when the number
// is above it, else NULL.
var raiseLatestSQL = `
WITH c AS (
  SELECT polled_chapter_num + $7 AS bound FROM series WHERE site = $1 AND series_id = $2),
u AS (
  UPDATE series SET latest_chapter_num = $3::text::numeric, latest_chapter_url = $4,
         latest_raised_by = $5, sighted_at = $6
  WHERE site = $1 AND series_id = $2
    AND (latest_chapter_num IS NULL OR latest_chapter_num < $3::text::numeric)
    AND (polled_chapter_num IS NULL OR $3::text::numeric <= polled_chapter_num + $7)
  RETURNING site)
SELECT (SELECT count(*) FROM u, LATERAL (SELECT pg_notify('` + LaneWakeChannel + `', u.site)) n),
       (SELECT bound::text FROM c WHERE bound < $3::text::numeric)`

// ImplausibleError is a Sighting above the Sighting bound (CONTEXT.md,
// Sighting): Bound is the highest number the Series takes from a Reader
// until a read of its page shows more.
type ImplausibleError struct{ Bound string }

func (e *ImplausibleError) Error() string { return "above the Sighting bound " + e.Bound }

// RaiseLatest applies a Reader's Sighting at now: a number above Latest
// Chapter and within the Sighting bound raises it and records readerID;
// a number above the bound is an *ImplausibleError and changes nothing;
// any other number changes nothing. It reports whether the number was
// raised.
func (s *Store) RaiseLatest(ctx context.Context, site, id, num, url, readerID string, now time.Time) (bool, error) {
	var n int
	var bound *string
	err := s.pool.QueryRow(ctx, raiseLatestSQL, site, id, num, url, readerID, instant(now), word.SightingReach).Scan(&n, &bound)
	if err != nil {
		return false, fmt.Errorf("store: raise latest %s/%s: %w", site, id, translate(err))
	}
	if bound != nil {
		return false, fmt.Errorf("store: raise latest %s/%s: %w", site, id, &ImplausibleError{Bound: *bound})
	}
	return n == 1, nil
}

// correctLatestSQL sets the owner's number. It clears nothing: not the
// failure row, not the attribution (clearing that is its own act).
const correctLatestSQL = `
UPDATE series SET latest_chapter_num = $3::text::numeric
WHERE site = $1 AND series_id = $2`

// CorrectLatestChapter sets Latest Chapter to the owner's hand-typed
// number, up or down. ErrNotFound when the Series does not exist.
func (s *Store) CorrectLatestChapter(ctx context.Context, site, id, num string) error {
	tag, err := s.pool.Exec(ctx, correctLatestSQL, site, id, num)
	if err != nil {
		return fmt.Errorf("store: correct latest %s/%s: %w", site, id, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: correct latest %s/%s: %w", site, id, ErrNotFound)
	}
	return nil
}

const clearAttributionSQL = `UPDATE series SET latest_raised_by = NULL WHERE site = $1 AND series_id = $2`

// ClearAttribution is the owner's explicit act of removing the Reader
// attribution from Latest Chapter. ErrNotFound when the Series does not exist.
func (s *Store) ClearAttribution(ctx context.Context, site, id string) error {
	tag, err := s.pool.Exec(ctx, clearAttributionSQL, site, id)
	if err != nil {
		return fmt.Errorf("store: clear attribution %s/%s: %w", site, id, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: clear attribution %s/%s: %w", site, id, ErrNotFound)
	}
	return nil
}
