DROP INDEX IF EXISTS series_never_checked;
DROP INDEX IF EXISTS series_no_chapter;
CREATE INDEX series_never_checked ON series (site, series_id)
    WHERE checked_at IS NULL AND finished_at IS NULL;
CREATE INDEX series_no_chapter ON series (site, series_id)
    WHERE latest_chapter_num IS NULL AND checked_at IS NOT NULL AND finished_at IS NULL;
