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

-- Since when every pass of the Lane that asked its Site anything (a Poll
-- that got as far as a fetch, or a listing page) reached nothing: its Polls
-- and its listing unreachable (docs/adr/0022). A pass that asked nothing
-- (skipped, or nothing due and no listing owed) says nothing either way, so
-- a restart, or an hour with nothing due, neither ends the run nor starts
-- it again. NULL once a pass was answered. asked_at is the newest pass that
-- asked, so a pass row written late (after an outage) cannot undo a newer
-- one. Kept by the trigger below from every pass-log row, whoever writes it;
-- store.unreachedPass is the same predicate over one row.
ALTER TABLE poll_lanes
    ADD COLUMN unreached_since timestamptz NULL,
    ADD COLUMN asked_at        timestamptz NULL;

CREATE FUNCTION poll_passes_reach() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    answered boolean := NEW.ok + NEW.no_chapter + NEW.not_found + NEW.errors + NEW.refused > 0
        OR NEW.listing_outcome NOT IN ('', 'unreachable');
BEGIN
    IF NEW.skip <> '' OR (NEW.ok + NEW.no_chapter + NEW.not_found + NEW.errors + NEW.refused
                          + NEW.unreachable = 0 AND NEW.listing_pages = 0) THEN
        RETURN NULL;
    END IF;
    UPDATE poll_lanes l
       SET asked_at = NEW.started_at,
           unreached_since = CASE WHEN answered THEN NULL ELSE coalesce(l.unreached_since, NEW.started_at) END
     WHERE l.site = NEW.site AND (l.asked_at IS NULL OR l.asked_at <= NEW.started_at);
    RETURN NULL;
END $$;

CREATE TRIGGER poll_passes_reach AFTER INSERT ON poll_passes
    FOR EACH ROW EXECUTE FUNCTION poll_passes_reach();

-- A server upgrading starts from its pass log: the same rule over the rows
-- it holds, in order.
DO $$
DECLARE p poll_passes;
BEGIN
    FOR p IN SELECT * FROM poll_passes WHERE started_at > now() - interval '7 days' ORDER BY started_at, id LOOP
        IF p.skip = '' AND (p.ok + p.no_chapter + p.not_found + p.errors + p.refused + p.unreachable > 0
                            OR p.listing_pages > 0) THEN
            UPDATE poll_lanes l SET asked_at = p.started_at,
                   unreached_since = CASE WHEN p.ok + p.no_chapter + p.not_found + p.errors + p.refused > 0
                                            OR p.listing_outcome NOT IN ('', 'unreachable')
                                          THEN NULL ELSE coalesce(l.unreached_since, p.started_at) END
             WHERE l.site = p.site;
        END IF;
    END LOOP;
END $$;
