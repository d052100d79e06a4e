-- How far the running server's clock reads ahead of the wall clock, in
-- milliseconds: 0 for a server on the real clock, the skipped hours for the
-- demo's. The notices command derives every age on the server's clock by
-- it, so it and /admin never disagree (CONTEXT.md, How each owner-notice
-- condition's age is derived).
ALTER TABLE server_webhook ADD COLUMN clock_ahead_ms bigint NOT NULL DEFAULT 0;
