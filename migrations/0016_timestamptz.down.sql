-- Back to bigint unix milliseconds with 0 for never (migration 0016 undone):
-- NULL becomes 0, and every index, trigger and default is as migrations
-- 0001 to 0015 left it.

DROP INDEX series_due, series_forced, series_never_checked, series_stale_since,
    series_no_address, series_no_chapter, series_site_completed, series_finished,
    series_failing_since, series_unverified_since, series_no_chapter_since,
    series_failing, series_unverified, series_unpollable,
    series_by_checked, series_by_failing, series_failing_by_site, series_checked_by_site,
    series_cover_due;
DROP TRIGGER series_tally_change ON series;

ALTER TABLE readers
    ALTER COLUMN created_at TYPE bigint USING (extract(epoch FROM created_at) * 1000)::bigint,
    ALTER COLUMN last_seen_at TYPE bigint USING coalesce((extract(epoch FROM last_seen_at) * 1000)::bigint, 0);
ALTER TABLE reader_tokens
    ALTER COLUMN created_at TYPE bigint USING (extract(epoch FROM created_at) * 1000)::bigint,
    ALTER COLUMN last_used_at TYPE bigint USING coalesce((extract(epoch FROM last_used_at) * 1000)::bigint, 0);
ALTER TABLE login_links
    ALTER COLUMN expires_at TYPE bigint USING (extract(epoch FROM expires_at) * 1000)::bigint;
ALTER TABLE series
    ALTER COLUMN created_at TYPE bigint USING (extract(epoch FROM created_at) * 1000)::bigint,
    ALTER COLUMN checked_at TYPE bigint USING coalesce((extract(epoch FROM checked_at) * 1000)::bigint, 0),
    ALTER COLUMN force_poll_at TYPE bigint USING coalesce((extract(epoch FROM force_poll_at) * 1000)::bigint, 0),
    ALTER COLUMN finished_at TYPE bigint USING coalesce((extract(epoch FROM finished_at) * 1000)::bigint, 0),
    ALTER COLUMN site_completed_at TYPE bigint USING coalesce((extract(epoch FROM site_completed_at) * 1000)::bigint, 0),
    ALTER COLUMN latest_chapter_at TYPE bigint USING coalesce((extract(epoch FROM latest_chapter_at) * 1000)::bigint, 0),
    ALTER COLUMN failing_since TYPE bigint USING coalesce((extract(epoch FROM failing_since) * 1000)::bigint, 0),
    ALTER COLUMN cover_retry_at TYPE bigint USING coalesce((extract(epoch FROM cover_retry_at) * 1000)::bigint, 0);
ALTER TABLE bookmarks
    ALTER COLUMN created_at TYPE bigint USING (extract(epoch FROM created_at) * 1000)::bigint,
    ALTER COLUMN updated_at TYPE bigint USING (extract(epoch FROM updated_at) * 1000)::bigint;
ALTER TABLE poll_lanes
    ALTER COLUMN paused_until TYPE bigint USING coalesce((extract(epoch FROM paused_until) * 1000)::bigint, 0),
    ALTER COLUMN refuse_until TYPE bigint USING coalesce((extract(epoch FROM refuse_until) * 1000)::bigint, 0),
    ALTER COLUMN force_poll_at TYPE bigint USING coalesce((extract(epoch FROM force_poll_at) * 1000)::bigint, 0),
    ALTER COLUMN paused_at TYPE bigint USING coalesce((extract(epoch FROM paused_at) * 1000)::bigint, 0);
ALTER TABLE poll_passes
    ALTER COLUMN started_at TYPE bigint USING (extract(epoch FROM started_at) * 1000)::bigint,
    ALTER COLUMN finished_at TYPE bigint USING (extract(epoch FROM finished_at) * 1000)::bigint;
ALTER TABLE poll_failures
    ALTER COLUMN failing_since TYPE bigint USING (extract(epoch FROM failing_since) * 1000)::bigint;
ALTER TABLE owner_notices
    ALTER COLUMN notified_at TYPE bigint USING coalesce((extract(epoch FROM notified_at) * 1000)::bigint, 0);
ALTER TABLE owner_notice_attempts
    ALTER COLUMN last_attempt_at TYPE bigint USING (extract(epoch FROM last_attempt_at) * 1000)::bigint,
    ALTER COLUMN retry_not_before TYPE bigint USING coalesce((extract(epoch FROM retry_not_before) * 1000)::bigint, 0);
ALTER TABLE owner_notice_claims
    ALTER COLUMN claimed_at TYPE bigint USING (extract(epoch FROM claimed_at) * 1000)::bigint;
ALTER TABLE dead_webhooks
    ALTER COLUMN dead_at TYPE bigint USING (extract(epoch FROM dead_at) * 1000)::bigint;
ALTER TABLE server_webhook
    ALTER COLUMN recorded_at TYPE bigint USING (extract(epoch FROM recorded_at) * 1000)::bigint;
ALTER TABLE api_idempotency
    ALTER COLUMN created_at TYPE bigint USING (extract(epoch FROM created_at) * 1000)::bigint;
ALTER TABLE covers
    ALTER COLUMN fetched_at TYPE bigint USING (extract(epoch FROM fetched_at) * 1000)::bigint;
ALTER TABLE readers
    ALTER COLUMN last_seen_at SET DEFAULT 0, ALTER COLUMN last_seen_at SET NOT NULL;
ALTER TABLE reader_tokens
    ALTER COLUMN last_used_at SET DEFAULT 0, ALTER COLUMN last_used_at SET NOT NULL;
ALTER TABLE series
    ALTER COLUMN checked_at SET DEFAULT 0, ALTER COLUMN checked_at SET NOT NULL,
    ALTER COLUMN force_poll_at SET DEFAULT 0, ALTER COLUMN force_poll_at SET NOT NULL,
    ALTER COLUMN finished_at SET DEFAULT 0, ALTER COLUMN finished_at SET NOT NULL,
    ALTER COLUMN site_completed_at SET DEFAULT 0, ALTER COLUMN site_completed_at SET NOT NULL,
    ALTER COLUMN latest_chapter_at SET DEFAULT 0, ALTER COLUMN latest_chapter_at SET NOT NULL,
    ALTER COLUMN failing_since SET DEFAULT 0, ALTER COLUMN failing_since SET NOT NULL,
    ALTER COLUMN cover_retry_at SET DEFAULT 0, ALTER COLUMN cover_retry_at SET NOT NULL;
ALTER TABLE poll_lanes
    ALTER COLUMN paused_until SET DEFAULT 0, ALTER COLUMN paused_until SET NOT NULL,
    ALTER COLUMN refuse_until SET DEFAULT 0, ALTER COLUMN refuse_until SET NOT NULL,
    ALTER COLUMN force_poll_at SET DEFAULT 0, ALTER COLUMN force_poll_at SET NOT NULL,
    ALTER COLUMN paused_at SET DEFAULT 0, ALTER COLUMN paused_at SET NOT NULL;
ALTER TABLE owner_notices
    ALTER COLUMN notified_at SET DEFAULT 0, ALTER COLUMN notified_at SET NOT NULL;
ALTER TABLE owner_notice_attempts
    ALTER COLUMN retry_not_before SET DEFAULT 0, ALTER COLUMN retry_not_before SET NOT NULL;

CREATE OR REPLACE FUNCTION series_latest_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- A statement that sets the time itself (an import, a test) keeps it.
    IF NEW.latest_chapter_num IS NOT NULL AND (
           (TG_OP = 'INSERT' AND NEW.latest_chapter_at = 0) OR
           (TG_OP = 'UPDATE' AND NEW.latest_chapter_num IS DISTINCT FROM OLD.latest_chapter_num
                             AND NEW.latest_chapter_at = OLD.latest_chapter_at)) THEN
        NEW.latest_chapter_at := (extract(epoch FROM statement_timestamp()) * 1000)::bigint;
    END IF;
    RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION poll_failures_copy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE series s SET failure_outcome = '', failing_since = 0
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
          FROM fresh WHERE finished_at = 0 AND url <> '' GROUP BY site
        ON CONFLICT (site) DO UPDATE SET pollable = t.pollable + excluded.pollable,
                                         no_chapter = t.no_chapter + excluded.no_chapter;
    ELSE
        UPDATE site_tallies t SET pollable = t.pollable - g.n, no_chapter = t.no_chapter - g.nc
          FROM (SELECT site, count(*) AS n, count(*) FILTER (WHERE failure_outcome = 'no_chapter') AS nc
                  FROM gone WHERE finished_at = 0 AND url <> '' GROUP BY site) g
         WHERE t.site = g.site;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION series_tally_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    was_in boolean := OLD.finished_at = 0 AND OLD.url <> '';
    now_in boolean := NEW.finished_at = 0 AND NEW.url <> '';
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
    WHEN ((OLD.finished_at = 0 AND OLD.url <> '') IS DISTINCT FROM (NEW.finished_at = 0 AND NEW.url <> '')
       OR (OLD.failure_outcome = 'no_chapter') IS DISTINCT FROM (NEW.failure_outcome = 'no_chapter'))
    EXECUTE FUNCTION series_tally_change();

CREATE INDEX series_due ON series (site, checked_at)
    WHERE finished_at = 0 AND url <> '';
CREATE INDEX series_forced ON series (site, force_poll_at)
    WHERE finished_at = 0 AND url <> '' AND force_poll_at > checked_at;
CREATE INDEX series_never_checked ON series (site, series_id)
    WHERE checked_at = 0 AND finished_at = 0;
CREATE INDEX series_stale_since ON series (site, checked_at)
    WHERE checked_at > 0 AND finished_at = 0;
CREATE INDEX series_no_address ON series (site, series_id)
    WHERE url = '' AND finished_at = 0;
CREATE INDEX series_no_chapter ON series (site, series_id)
    WHERE latest_chapter_num IS NULL AND checked_at > 0 AND finished_at = 0;
CREATE INDEX series_site_completed ON series (site, series_id)
    WHERE site_completed_at > 0 AND finished_at = 0;
CREATE INDEX series_finished ON series (site, series_id)
    WHERE finished_at > 0;
CREATE INDEX series_failing_since ON series (site, failing_since)
    WHERE failing_since > 0 AND latest_chapter_num IS NOT NULL;
CREATE INDEX series_unverified_since ON series (site, failing_since)
    WHERE failing_since > 0 AND latest_chapter_num IS NOT NULL AND latest_raised_by IS NOT NULL;
CREATE INDEX series_no_chapter_since ON series (site, failing_since)
    WHERE failure_outcome = 'no_chapter' AND finished_at = 0 AND url <> '';
CREATE INDEX series_failing ON series (site, series_id) INCLUDE (failing_since)
    WHERE failing_since > 0 AND latest_chapter_num IS NOT NULL;
CREATE INDEX series_unverified ON series (site, series_id) INCLUDE (failing_since)
    WHERE failing_since > 0 AND latest_chapter_num IS NOT NULL AND latest_raised_by IS NOT NULL;
CREATE INDEX series_unpollable ON series (site, series_id)
    WHERE finished_at = 0 AND (url = '' OR failure_outcome = 'unfetchable');
CREATE INDEX series_by_checked ON series (checked_at, site, series_id);
CREATE INDEX series_by_failing ON series
    ((CASE WHEN failing_since = 0 THEN 9223372036854775807 ELSE failing_since END), site, series_id);
CREATE INDEX series_failing_by_site ON series
    (site, (CASE WHEN failing_since = 0 THEN 9223372036854775807 ELSE failing_since END), series_id);
CREATE INDEX series_checked_by_site ON series (site, checked_at, series_id);
CREATE INDEX series_cover_due ON series (site, cover_retry_at)
    WHERE cover_url <> '' AND cover_url <> cover_tried;
