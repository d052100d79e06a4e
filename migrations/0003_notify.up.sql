-- Owner notice delivery, kept apart from owner_notices so that table keeps
-- carrying only the one fact CONTEXT.md (Owner notice) gives it: the owner was told. The notices
-- command and /admin run in other processes, so why a notice is still pending
-- has to live in the database.

-- The last failed attempt to deliver one open notice. Cascades from its
-- notice, so a lifted condition takes its delivery history with it and the
-- next episode starts clean.
CREATE TABLE owner_notice_attempts (
    kind             text   NOT NULL,
    site             text   NOT NULL,
    attempts         int    NOT NULL DEFAULT 0,
    last_attempt_at  bigint NOT NULL,
    last_error       text   NOT NULL DEFAULT '',
    -- Discord answered 429: no attempt before this time (unix ms; 0 = none).
    retry_not_before bigint NOT NULL DEFAULT 0,
    -- Discord refused the message (a 4xx other than 404 and 429): the next
    -- attempt waits an hour (retry_not_before) rather than every pass.
    gave_up          boolean NOT NULL DEFAULT false,
    PRIMARY KEY (kind, site),
    FOREIGN KEY (kind, site) REFERENCES owner_notices (kind, site) ON DELETE CASCADE
);

-- A webhook address Discord answered 404 (Unknown Webhook) for. Keyed by the
-- SHA-256 of the address, never the address itself: a changed
-- DISCORD_WEBHOOK_URL hashes differently, so changing the setting is what
-- revives sending.
CREATE TABLE dead_webhooks (
    url_hash text   PRIMARY KEY,
    dead_at  bigint NOT NULL
);
