CREATE INDEX IF NOT EXISTS poll_failures_site_outcome ON poll_failures (site, outcome, failing_since);
CREATE INDEX IF NOT EXISTS poll_failures_since ON poll_failures (failing_since);
CREATE INDEX IF NOT EXISTS poll_failures_unfetchable ON poll_failures (site, series_id) WHERE outcome = 'unfetchable';
CREATE INDEX series_stale ON series (checked_at) WHERE checked_at > 0 AND finished_at = 0;
CREATE INDEX IF NOT EXISTS series_kind ON series (kind, site, series_id);
DROP INDEX IF EXISTS series_stale_since, series_failing_since, series_unverified_since,
    series_no_chapter_since, series_failing, series_unverified, series_unpollable;
DROP TRIGGER IF EXISTS series_tally_change ON series;
DROP TRIGGER IF EXISTS series_tally_insert ON series;
DROP TRIGGER IF EXISTS series_tally_delete ON series;
DROP FUNCTION IF EXISTS series_tally_change(), series_tally_rows();
DROP TABLE IF EXISTS site_tallies;
DROP TRIGGER IF EXISTS poll_failures_copy_insert ON poll_failures;
DROP TRIGGER IF EXISTS poll_failures_copy_update ON poll_failures;
DROP TRIGGER IF EXISTS poll_failures_copy_delete ON poll_failures;
DROP FUNCTION IF EXISTS poll_failures_copy();
ALTER TABLE series DROP COLUMN IF EXISTS failing_since, DROP COLUMN IF EXISTS failure_outcome;
