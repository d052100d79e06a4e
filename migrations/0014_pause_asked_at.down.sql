ALTER TABLE poll_lanes DROP COLUMN IF EXISTS paused_at;
