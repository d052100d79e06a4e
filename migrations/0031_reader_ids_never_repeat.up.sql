-- A revocation is permanent (ADR 0030). A Reader row made from now on starts
-- its session epoch at random, far above any epoch counted up from 0, so a
-- cookie issued for an earlier row of the same id (a Discord Reader removed
-- and signing in again) never matches the new row. Rows that exist keep
-- their epoch: their cookies go on working until revoked.
ALTER TABLE readers ALTER COLUMN session_epoch SET DEFAULT (2^32 + floor(random() * 2^61))::bigint;

-- A Reader the owner names gets a random id from now on; their name is told
-- apart without regard to case by name_key, the digest of the lower-cased
-- name, which until now was the id itself (so it is copied from the id;
-- 'local-owner' is no digest and matches none). NULL: a Discord Reader.
ALTER TABLE readers ADD COLUMN name_key text NULL UNIQUE;
UPDATE readers SET name_key = discord_id WHERE discord_id LIKE 'local-%';
