ALTER TABLE poll_lanes
    DROP COLUMN listing_tried_at,
    DROP COLUMN listing_outcome,
    DROP COLUMN listing_entries,
    DROP COLUMN listing_marked,
    DROP COLUMN listing_failing_since;
