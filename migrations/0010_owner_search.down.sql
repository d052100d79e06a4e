DROP TABLE IF EXISTS server_webhook;
DROP INDEX IF EXISTS series_by_failing;
DROP INDEX IF EXISTS series_by_checked;
DROP INDEX IF EXISTS series_by_title;
DROP INDEX IF EXISTS series_title_trgm;
-- pg_trgm stays: another schema object may have come to use it.
