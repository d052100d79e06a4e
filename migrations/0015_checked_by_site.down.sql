DROP INDEX IF EXISTS series_checked_by_site;
