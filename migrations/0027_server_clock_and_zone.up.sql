-- What the notices command must read on the running server's terms, not its
-- own: how far the server's clock reads ahead of the wall clock, in
-- milliseconds (0 on the real clock, the skipped hours on the demo's), so
-- it derives every age where /admin does (CONTEXT.md, How each owner-notice
-- condition's age is derived); and the owner's time zone (TIME_ZONE, ''
-- for none recorded), so it prints a moment as the pages do.
ALTER TABLE server_webhook
    ADD COLUMN clock_ahead_ms bigint NOT NULL DEFAULT 0,
    ADD COLUMN time_zone text NOT NULL DEFAULT '';
