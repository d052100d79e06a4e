DROP INDEX IF EXISTS series_failing_young;
