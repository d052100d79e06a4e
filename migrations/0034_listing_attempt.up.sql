-- The Lane's last listing attempt, whatever it ended in (ADR 0016, Revised):
-- when, its first page's outcome word, the rows the walk read and the
-- Series it made urgent, and since when every attempt has failed (refused,
-- unreachable or errors; NULL while the last one was read). The Lanes page
-- and /admin read these, never a process's memory, so a restart changes
-- nothing they say, and a failure's age runs from its first attempt.
ALTER TABLE poll_lanes
    ADD COLUMN listing_tried_at      timestamptz NULL,
    ADD COLUMN listing_outcome       text        NOT NULL DEFAULT '',
    ADD COLUMN listing_entries       int         NOT NULL DEFAULT 0,
    ADD COLUMN listing_marked        int         NOT NULL DEFAULT 0,
    ADD COLUMN listing_failing_since timestamptz NULL;

-- A server upgrading keeps what its pass log says of the last walk: its
-- outcome, rows and marks, and the first of the failing walks since the
-- last one that read the listing.
UPDATE poll_lanes l
   SET listing_tried_at = p.started_at, listing_outcome = p.listing_outcome,
       listing_entries = p.listing_entries, listing_marked = p.listing_marked,
       listing_failing_since = CASE WHEN p.listing_outcome IN ('refused', 'unreachable', 'errors') THEN (
           SELECT min(f.started_at) FROM poll_passes f
            WHERE f.site = l.site AND f.listing_pages > 0
              AND f.started_at > coalesce((
                  SELECT max(r.started_at) FROM poll_passes r
                   WHERE r.site = l.site AND r.listing_pages > 0
                     AND r.listing_outcome NOT IN ('refused', 'unreachable', 'errors')), '-infinity'))
       END
  FROM (SELECT DISTINCT ON (site) site, started_at, listing_outcome, listing_entries, listing_marked
          FROM poll_passes WHERE listing_pages > 0
         ORDER BY site, started_at DESC) p
 WHERE p.site = l.site;
