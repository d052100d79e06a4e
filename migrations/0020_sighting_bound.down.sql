DROP INDEX series_unverified;
CREATE INDEX series_unverified_since ON series (site, failing_since)
    WHERE failing_since IS NOT NULL AND latest_chapter_num IS NOT NULL AND latest_raised_by IS NOT NULL;
CREATE INDEX series_unverified ON series (site, series_id) INCLUDE (failing_since)
    WHERE failing_since IS NOT NULL AND latest_chapter_num IS NOT NULL AND latest_raised_by IS NOT NULL;
ALTER TABLE series DROP COLUMN polled_chapter_num;
