-- Times are timestamptz, NULL for never (docs/adr/0015). Until now every time
-- column was bigint unix milliseconds with 0 for never (migration 0001), so
-- an owner reading the database saw numbers. Each column is converted in
-- place, to the millisecond it held; a 0 becomes NULL where it meant never,
-- and those columns lose NOT NULL and their DEFAULT 0 (the default is now
-- NULL). The columns that always hold a time keep NOT NULL.
--
-- An index whose predicate or expression compares a time with 0 cannot be
-- rebuilt by ALTER ... TYPE, so each is dropped first and recreated below
-- under its own name with IS NULL / IS NOT NULL. Where an order put "never"
-- at one end (a never-checked Series before every check; a Series without a
-- failure row after every age; a cover with no retry time first), the key
-- is the column with never read as -infinity or infinity, so the order, the
-- keyset comparisons and min() read exactly what they read before. The
-- triggers of migrations 0008 and 0009 are rewritten the same way.

DROP INDEX series_due, series_forced, series_never_checked, series_stale_since,
    series_no_address, series_no_chapter, series_site_completed, series_finished,
    series_failing_since, series_unverified_since, series_no_chapter_since,
    series_failing, series_unverified, series_unpollable,
    series_by_checked, series_by_failing, series_failing_by_site, series_checked_by_site,
    series_cover_due;
-- Its WHEN clause and column list name finished_at.
DROP TRIGGER series_tally_change ON series;

-- The columns where 0 meant never (or none, or not known).
ALTER TABLE readers
    ALTER COLUMN last_seen_at DROP DEFAULT, ALTER COLUMN last_seen_at DROP NOT NULL;
ALTER TABLE reader_tokens
    ALTER COLUMN last_used_at DROP DEFAULT, ALTER COLUMN last_used_at DROP NOT NULL;
ALTER TABLE series
    ALTER COLUMN checked_at DROP DEFAULT, ALTER COLUMN checked_at DROP NOT NULL,
    ALTER COLUMN force_poll_at DROP DEFAULT, ALTER COLUMN force_poll_at DROP NOT NULL,
    ALTER COLUMN finished_at DROP DEFAULT, ALTER COLUMN finished_at DROP NOT NULL,
    ALTER COLUMN site_completed_at DROP DEFAULT, ALTER COLUMN site_completed_at DROP NOT NULL,
    ALTER COLUMN latest_chapter_at DROP DEFAULT, ALTER COLUMN latest_chapter_at DROP NOT NULL,
    ALTER COLUMN failing_since DROP DEFAULT, ALTER COLUMN failing_since DROP NOT NULL,
    ALTER COLUMN cover_retry_at DROP DEFAULT, ALTER COLUMN cover_retry_at DROP NOT NULL;
ALTER TABLE poll_lanes
    ALTER COLUMN paused_until DROP DEFAULT, ALTER COLUMN paused_until DROP NOT NULL,
    ALTER COLUMN refuse_until DROP DEFAULT, ALTER COLUMN refuse_until DROP NOT NULL,
    ALTER COLUMN force_poll_at DROP DEFAULT, ALTER COLUMN force_poll_at DROP NOT NULL,
    ALTER COLUMN paused_at DROP DEFAULT, ALTER COLUMN paused_at DROP NOT NULL;
ALTER TABLE owner_notices
    ALTER COLUMN notified_at DROP DEFAULT, ALTER COLUMN notified_at DROP NOT NULL;
ALTER TABLE owner_notice_attempts
    ALTER COLUMN retry_not_before DROP DEFAULT, ALTER COLUMN retry_not_before DROP NOT NULL;

-- A value is that many milliseconds after the epoch; a 0 that meant never
-- becomes NULL. One ALTER TABLE per table, so each is rewritten once.
ALTER TABLE readers
    ALTER COLUMN created_at TYPE timestamptz USING timestamptz 'epoch' + created_at * interval '1 millisecond',
    ALTER COLUMN last_seen_at TYPE timestamptz
        USING CASE WHEN last_seen_at = 0 THEN NULL ELSE timestamptz 'epoch' + last_seen_at * interval '1 millisecond' END;
ALTER TABLE reader_tokens
    ALTER COLUMN created_at TYPE timestamptz USING timestamptz 'epoch' + created_at * interval '1 millisecond',
    ALTER COLUMN last_used_at TYPE timestamptz
        USING CASE WHEN last_used_at = 0 THEN NULL ELSE timestamptz 'epoch' + last_used_at * interval '1 millisecond' END;
ALTER TABLE login_links
    ALTER COLUMN expires_at TYPE timestamptz USING timestamptz 'epoch' + expires_at * interval '1 millisecond';
ALTER TABLE series
    ALTER COLUMN checked_at TYPE timestamptz
        USING CASE WHEN checked_at = 0 THEN NULL ELSE timestamptz 'epoch' + checked_at * interval '1 millisecond' END,
    ALTER COLUMN force_poll_at TYPE timestamptz
        USING CASE WHEN force_poll_at = 0 THEN NULL ELSE timestamptz 'epoch' + force_poll_at * interval '1 millisecond' END,
    ALTER COLUMN finished_at TYPE timestamptz
        USING CASE WHEN finished_at = 0 THEN NULL ELSE timestamptz 'epoch' + finished_at * interval '1 millisecond' END,
    ALTER COLUMN site_completed_at TYPE timestamptz
        USING CASE WHEN site_completed_at = 0 THEN NULL ELSE timestamptz 'epoch' + site_completed_at * interval '1 millisecond' END,
    ALTER COLUMN latest_chapter_at TYPE timestamptz
        USING CASE WHEN latest_chapter_at = 0 THEN NULL ELSE timestamptz 'epoch' + latest_chapter_at * interval '1 millisecond' END,
    ALTER COLUMN failing_since TYPE timestamptz
        USING CASE WHEN failing_since = 0 THEN NULL ELSE timestamptz 'epoch' + failing_since * interval '1 millisecond' END,
    ALTER COLUMN cover_retry_at TYPE timestamptz
        USING CASE WHEN cover_retry_at = 0 THEN NULL ELSE timestamptz 'epoch' + cover_retry_at * interval '1 millisecond' END,
    ALTER COLUMN created_at TYPE timestamptz USING timestamptz 'epoch' + created_at * interval '1 millisecond';
ALTER TABLE bookmarks
    ALTER COLUMN created_at TYPE timestamptz USING timestamptz 'epoch' + created_at * interval '1 millisecond',
    ALTER COLUMN updated_at TYPE timestamptz USING timestamptz 'epoch' + updated_at * interval '1 millisecond';
ALTER TABLE poll_lanes
    ALTER COLUMN paused_until TYPE timestamptz
        USING CASE WHEN paused_until = 0 THEN NULL ELSE timestamptz 'epoch' + paused_until * interval '1 millisecond' END,
    ALTER COLUMN refuse_until TYPE timestamptz
        USING CASE WHEN refuse_until = 0 THEN NULL ELSE timestamptz 'epoch' + refuse_until * interval '1 millisecond' END,
    ALTER COLUMN force_poll_at TYPE timestamptz
        USING CASE WHEN force_poll_at = 0 THEN NULL ELSE timestamptz 'epoch' + force_poll_at * interval '1 millisecond' END,
    ALTER COLUMN paused_at TYPE timestamptz
        USING CASE WHEN paused_at = 0 THEN NULL ELSE timestamptz 'epoch' + paused_at * interval '1 millisecond' END;
ALTER TABLE poll_passes
    ALTER COLUMN started_at TYPE timestamptz USING timestamptz 'epoch' + started_at * interval '1 millisecond',
    ALTER COLUMN finished_at TYPE timestamptz USING timestamptz 'epoch' + finished_at * interval '1 millisecond';
ALTER TABLE poll_failures
    ALTER COLUMN failing_since TYPE timestamptz USING timestamptz 'epoch' + failing_since * interval '1 millisecond';
ALTER TABLE owner_notices
    ALTER COLUMN notified_at TYPE timestamptz
        USING CASE WHEN notified_at = 0 THEN NULL ELSE timestamptz 'epoch' + notified_at * interval '1 millisecond' END;
ALTER TABLE owner_notice_attempts
    ALTER COLUMN last_attempt_at TYPE timestamptz USING timestamptz 'epoch' + last_attempt_at * interval '1 millisecond',
    ALTER COLUMN retry_not_before TYPE timestamptz
        USING CASE WHEN retry_not_before = 0 THEN NULL ELSE timestamptz 'epoch' + retry_not_before * interval '1 millisecond' END;
ALTER TABLE owner_notice_claims
    ALTER COLUMN claimed_at TYPE timestamptz USING timestamptz 'epoch' + claimed_at * interval '1 millisecond';
ALTER TABLE dead_webhooks
    ALTER COLUMN dead_at TYPE timestamptz USING timestamptz 'epoch' + dead_at * interval '1 millisecond';
ALTER TABLE server_webhook
    ALTER COLUMN recorded_at TYPE timestamptz USING timestamptz 'epoch' + recorded_at * interval '1 millisecond';
ALTER TABLE api_idempotency
    ALTER COLUMN created_at TYPE timestamptz USING timestamptz 'epoch' + created_at * interval '1 millisecond';
ALTER TABLE covers
    ALTER COLUMN fetched_at TYPE timestamptz USING timestamptz 'epoch' + fetched_at * interval '1 millisecond';

-- Migration 0008's trigger: a statement that sets the time itself keeps it;
-- the time is the statement's, to the millisecond as before.
CREATE OR REPLACE FUNCTION series_latest_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.latest_chapter_num IS NOT NULL AND (
           (TG_OP = 'INSERT' AND NEW.latest_chapter_at IS NULL) OR
           (TG_OP = 'UPDATE' AND NEW.latest_chapter_num IS DISTINCT FROM OLD.latest_chapter_num
                             AND NEW.latest_chapter_at IS NOT DISTINCT FROM OLD.latest_chapter_at)) THEN
        NEW.latest_chapter_at := date_trunc('milliseconds', statement_timestamp());
    END IF;
    RETURN NEW;
END $$;

-- Migration 0009's triggers.
CREATE OR REPLACE FUNCTION poll_failures_copy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE series s SET failure_outcome = '', failing_since = NULL
          FROM gone g WHERE s.site = g.site AND s.series_id = g.series_id;
    ELSE
        UPDATE series s SET failure_outcome = n.outcome, failing_since = n.failing_since
          FROM fresh n WHERE s.site = n.site AND s.series_id = n.series_id
           AND (s.failure_outcome, s.failing_since) IS DISTINCT FROM (n.outcome, n.failing_since);
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION series_tally_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO site_tallies AS t (site, pollable, no_chapter)
        SELECT site, count(*), count(*) FILTER (WHERE failure_outcome = 'no_chapter')
          FROM fresh WHERE finished_at IS NULL AND url <> '' GROUP BY site
        ON CONFLICT (site) DO UPDATE SET pollable = t.pollable + excluded.pollable,
                                         no_chapter = t.no_chapter + excluded.no_chapter;
    ELSE
        UPDATE site_tallies t SET pollable = t.pollable - g.n, no_chapter = t.no_chapter - g.nc
          FROM (SELECT site, count(*) AS n, count(*) FILTER (WHERE failure_outcome = 'no_chapter') AS nc
                  FROM gone WHERE finished_at IS NULL AND url <> '' GROUP BY site) g
         WHERE t.site = g.site;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION series_tally_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    was_in boolean := OLD.finished_at IS NULL AND OLD.url <> '';
    now_in boolean := NEW.finished_at IS NULL AND NEW.url <> '';
    dp     int := now_in::int - was_in::int;
    dn     int := (now_in AND NEW.failure_outcome = 'no_chapter')::int
                - (was_in AND OLD.failure_outcome = 'no_chapter')::int;
BEGIN
    INSERT INTO site_tallies AS t (site, pollable, no_chapter) VALUES (NEW.site, dp, dn)
    ON CONFLICT (site) DO UPDATE SET pollable = t.pollable + dp, no_chapter = t.no_chapter + dn;
    RETURN NULL;
END $$;

CREATE TRIGGER series_tally_change AFTER UPDATE OF url, finished_at, failure_outcome ON series
    FOR EACH ROW
    WHEN ((OLD.finished_at IS NULL AND OLD.url <> '') IS DISTINCT FROM (NEW.finished_at IS NULL AND NEW.url <> '')
       OR (OLD.failure_outcome = 'no_chapter') IS DISTINCT FROM (NEW.failure_outcome = 'no_chapter'))
    EXECUTE FUNCTION series_tally_change();

-- The indexes, each under its old name, in the same order and with the same
-- predicates read for NULL.
CREATE INDEX series_due ON series (site, (coalesce(checked_at, timestamptz '-infinity')))
    WHERE finished_at IS NULL AND url <> '';
CREATE INDEX series_forced ON series (site, force_poll_at)
    WHERE finished_at IS NULL AND url <> '' AND force_poll_at > coalesce(checked_at, timestamptz '-infinity');
CREATE INDEX series_never_checked ON series (site, series_id)
    WHERE checked_at IS NULL AND finished_at IS NULL;
CREATE INDEX series_stale_since ON series (site, checked_at)
    WHERE checked_at IS NOT NULL AND finished_at IS NULL;
CREATE INDEX series_no_address ON series (site, series_id)
    WHERE url = '' AND finished_at IS NULL;
CREATE INDEX series_no_chapter ON series (site, series_id)
    WHERE latest_chapter_num IS NULL AND checked_at IS NOT NULL AND finished_at IS NULL;
CREATE INDEX series_site_completed ON series (site, series_id)
    WHERE site_completed_at IS NOT NULL AND finished_at IS NULL;
CREATE INDEX series_finished ON series (site, series_id)
    WHERE finished_at IS NOT NULL;
CREATE INDEX series_failing_since ON series (site, failing_since)
    WHERE failing_since IS NOT NULL AND latest_chapter_num IS NOT NULL;
CREATE INDEX series_unverified_since ON series (site, failing_since)
    WHERE failing_since IS NOT NULL AND latest_chapter_num IS NOT NULL AND latest_raised_by IS NOT NULL;
CREATE INDEX series_no_chapter_since ON series (site, failing_since)
    WHERE failure_outcome = 'no_chapter' AND finished_at IS NULL AND url <> '';
CREATE INDEX series_failing ON series (site, series_id) INCLUDE (failing_since)
    WHERE failing_since IS NOT NULL AND latest_chapter_num IS NOT NULL;
CREATE INDEX series_unverified ON series (site, series_id) INCLUDE (failing_since)
    WHERE failing_since IS NOT NULL AND latest_chapter_num IS NOT NULL AND latest_raised_by IS NOT NULL;
CREATE INDEX series_unpollable ON series (site, series_id)
    WHERE finished_at IS NULL AND (url = '' OR failure_outcome = 'unfetchable');
CREATE INDEX series_by_checked ON series
    ((coalesce(checked_at, timestamptz '-infinity')), site, series_id);
CREATE INDEX series_by_failing ON series
    ((coalesce(failing_since, timestamptz 'infinity')), site, series_id);
CREATE INDEX series_failing_by_site ON series
    (site, (coalesce(failing_since, timestamptz 'infinity')), series_id);
CREATE INDEX series_checked_by_site ON series
    (site, (coalesce(checked_at, timestamptz '-infinity')), series_id);
CREATE INDEX series_cover_due ON series (site, (coalesce(cover_retry_at, timestamptz '-infinity')))
    WHERE cover_url <> '' AND cover_url <> cover_tried;
