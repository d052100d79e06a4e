DROP INDEX IF EXISTS series_failing_by_site;
DROP INDEX IF EXISTS series_title_by_site;
