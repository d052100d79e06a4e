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

// sightSQL applies a Sighting. On a Series a Poll has read a number from,
// it raises Latest Chapter to the number when higher (compared as numeric:
// 12.5 sits between 12 and 13) and within the Sighting bound: the highest
// number a read of the page has shown plus $7 (word.SightingReach).
//
// On a Series no read has shown a number for there is no bound to check,
// so the number counts for its Reader only (CONTEXT.md, Sighting; ADR
// 0021): it is kept in own_sightings, the Reader's highest, which their own
// list reads (bookmarkSelect). It reaches Latest Chapter only when another
// Reader's own Sighting agrees within the bound (the two differ by at most
// $7), and then as the lower of the two, the number both stand behind,
// attributed to whoever sighted that one. Once a read shows a number, the
// Series' own Sightings are dead and go.
//
// A raise records the Reader and the time and wakes the Series' Lane: a
// raised Series is read next, right after Forced Polls, so a Poll confirms
// or contradicts the Sighting at once (ADR 0016). The answer: how many rows
// rose (0 or 1), the bound when the number is above it (else NULL), and
// whether the page has no Poll-read number.
var sightSQL = `
WITH c AS (
  SELECT polled_chapter_num IS NULL AS unread, polled_chapter_num + $7 AS bound
    FROM series WHERE site = $1 AND series_id = $2),
own AS (
  INSERT INTO own_sightings (site, series_id, reader_id, chapter_num, chapter_url, sighted_at)
  SELECT $1, $2, $5, $3::text::numeric, $4, $6 FROM c WHERE c.unread
  ON CONFLICT (site, series_id, reader_id) DO UPDATE
     SET chapter_num = excluded.chapter_num, chapter_url = excluded.chapter_url, sighted_at = excluded.sighted_at
   WHERE own_sightings.chapter_num < excluded.chapter_num),
gone AS (
  DELETE FROM own_sightings o USING c WHERE NOT c.unread AND o.site = $1 AND o.series_id = $2),
agreed AS (
  SELECT least(o.chapter_num, $3::text::numeric) AS num,
         CASE WHEN o.chapter_num < $3::text::numeric THEN o.reader_id ELSE $5 END AS by,
         CASE WHEN o.chapter_num < $3::text::numeric THEN o.chapter_url ELSE $4 END AS url
    FROM own_sightings o, c
   WHERE c.unread AND o.site = $1 AND o.series_id = $2 AND o.reader_id <> $5
     AND o.chapter_num BETWEEN $3::text::numeric - $7 AND $3::text::numeric + $7
   ORDER BY 1 DESC LIMIT 1),
pick AS (
  SELECT coalesce(a.num, $3::text::numeric) AS num, coalesce(a.url, $4) AS url,
         coalesce(a.by, $5) AS by, a.num IS NOT NULL AS agreed
    FROM (SELECT) one LEFT JOIN agreed a ON true),
u AS (
  UPDATE series s SET latest_chapter_num = p.num, latest_chapter_url = p.url,
         latest_raised_by = p.by, sighted_at = $6
    FROM pick p
   WHERE s.site = $1 AND s.series_id = $2
     AND (s.latest_chapter_num IS NULL OR s.latest_chapter_num < p.num)
     AND CASE WHEN s.polled_chapter_num IS NULL THEN p.agreed ELSE p.num <= s.polled_chapter_num + $7 END
  RETURNING s.site)
SELECT (SELECT count(*) FROM u, LATERAL (SELECT pg_notify('` + LaneWakeChannel + `', u.site)) n),
       (SELECT bound::text FROM c WHERE bound < $3::text::numeric),
       coalesce((SELECT unread FROM c), false)`

// ImplausibleError is a Sighting above the Sighting bound (CONTEXT.md,
// Sighting): Bound is the highest number the Series takes from a Reader
// until a read of its page shows more.
type ImplausibleError struct{ Bound string }

func (e *ImplausibleError) Error() string { return "above the Sighting bound " + e.Bound }

// Sighted is what a Sighting did.
type Sighted struct {
	// Raised: Latest Chapter rose, for every Reader.
	Raised bool
	// OnlyYours: no read of the Series' page has shown a number and no
	// other Reader's Sighting agreed, so the number counts for its Reader
	// only (CONTEXT.md, Sighting).
	OnlyYours bool
}

// Sight applies a Reader's Sighting at now (sightSQL): a number above the
// Sighting bound is an *ImplausibleError and changes nothing. A Series
// that does not exist is the zero Sighted.
func (s *Store) Sight(ctx context.Context, site, id, num, url, readerID string, now time.Time) (Sighted, error) {
	var n int
	var bound *string
	var unread bool
	err := s.pool.QueryRow(ctx, sightSQL, site, id, num, url, readerID, instant(now), word.SightingReach).Scan(&n, &bound, &unread)
	if err != nil {
		return Sighted{}, fmt.Errorf("store: sight %s/%s: %w", site, id, translate(err))
	}
	if bound != nil {
		return Sighted{}, fmt.Errorf("store: sight %s/%s: %w", site, id, &ImplausibleError{Bound: *bound})
	}
	return Sighted{Raised: n == 1, OnlyYours: unread && n == 0}, nil
}

// RaiseLatest is Sight for a caller that asks only whether Latest Chapter
// rose for every Reader.
func (s *Store) RaiseLatest(ctx context.Context, site, id, num, url, readerID string, now time.Time) (bool, error) {
	v, err := s.Sight(ctx, site, id, num, url, readerID, now)
	return v.Raised, err
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
