-- The Discord guild re-check (CONTEXT.md, Guild re-check): a Reader who
-- signed in with Discord keeps the OAuth refresh token, sealed under a key
-- derived from TOKEN_KEY (never plain text), and the time the next check
-- of their guild membership is due. NULL due: never checked (the owner's
-- links, the Readers the owner named, or Discord sign-in not set up).
ALTER TABLE readers ADD COLUMN discord_refresh    bytea       NULL;
ALTER TABLE readers ADD COLUMN guild_check_due_at timestamptz NULL;

-- A Discord Reader who signed in before this migration left no refresh
-- token: their next request is due for a check, which (having no grant to
-- ask with) ends their sessions once so that they sign in with Discord again.
UPDATE readers SET guild_check_due_at = now() WHERE discord_id ~ '^[0-9]+$';
