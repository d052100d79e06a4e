-- "never read" and "no chapter" split the Series without a chapter by whether
-- a Poll ever reached the page: a refused or unreachable Poll stamps
-- checked_at and writes no failure row (ADR 0003, ADR 0022). Each index's
-- predicate is its filter's text in store/admin.go.
DROP INDEX IF EXISTS series_never_checked;
DROP INDEX IF EXISTS series_no_chapter;
CREATE INDEX series_never_checked ON series (site, series_id)
    WHERE finished_at IS NULL AND (checked_at IS NULL OR (latest_chapter_num IS NULL AND failure_outcome = ''));
CREATE INDEX series_no_chapter ON series (site, series_id)
    WHERE latest_chapter_num IS NULL AND checked_at IS NOT NULL AND finished_at IS NULL AND failure_outcome <> '';
