ALTER TABLE poll_lanes
    DROP COLUMN listing_read_at, DROP COLUMN listing_ok_at, DROP COLUMN listing_empty_since;
ALTER TABLE poll_passes
    DROP COLUMN listing_pages, DROP COLUMN listing_entries, DROP COLUMN listing_marked,
    DROP COLUMN listing_outcome;
DROP TABLE chapter_arrivals;
DROP INDEX series_next, series_ahead, series_ahead_checked, series_sighted, series_listed;
ALTER TABLE series
    DROP COLUMN next_read_at, DROP COLUMN sighted_at, DROP COLUMN listed_chapter_num,
    DROP COLUMN listed_at, DROP COLUMN chapter_arrived_at, DROP COLUMN cadence_s;
