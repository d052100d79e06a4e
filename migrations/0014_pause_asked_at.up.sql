-- When the owner asked for the Lane's current Pause (unix ms; 0: a Pause
-- written before this column, or none). The Lanes page reads a Pause as
-- served once a pass that started at or after this moment was skipped as
-- paused, so neither another replica's not-leader pass nor a paused pass
-- left from an earlier Pause can make it look served (CONTEXT.md, Pause).
ALTER TABLE poll_lanes ADD COLUMN paused_at bigint NOT NULL DEFAULT 0;
