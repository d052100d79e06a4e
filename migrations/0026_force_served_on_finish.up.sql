-- A Forced Poll of a Series is served when a read of it finishes, not when
-- the read's check stamp is written at its start: the poller now clears
-- force_poll_at after the read's outcome is recorded (CONTEXT.md, Forced
-- Poll), and the detail page reads "pending" as force_poll_at IS NOT NULL.
-- A request the old rule already counted served (its check stamp passed
-- it) is cleared here, so it never reads as pending again.
UPDATE series SET force_poll_at = NULL WHERE force_poll_at <= checked_at;
