DROP TRIGGER poll_passes_reach ON poll_passes;
DROP FUNCTION poll_passes_reach();
ALTER TABLE poll_lanes
    DROP COLUMN listing_tried_at,
    DROP COLUMN listing_outcome,
    DROP COLUMN listing_entries,
    DROP COLUMN listing_marked,
    DROP COLUMN listing_failing_since,
    DROP COLUMN unreached_since,
    DROP COLUMN asked_at;
