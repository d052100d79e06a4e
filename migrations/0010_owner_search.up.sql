-- The owner's Series list: a title search that stays fast at a
-- million Series, three sort orders with keyset paging, and the webhook
-- state the server records so `mangabookmark notices` can report it.

-- Trigram search: title ILIKE '%word%' reads this GIN index instead of every
-- row. pg_trgm is a trusted extension: the database owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX series_title_trgm ON series USING gin (title gin_trgm_ops);

-- One index per sort order, each ending in the primary key so a keyset
-- cursor (sort key, site, series_id) starts the walk where the page starts.
CREATE INDEX series_by_title ON series (title, site, series_id);
CREATE INDEX series_by_checked ON series (checked_at, site, series_id);
-- Longest-failing first; Series without a failure row sort after all others.
CREATE INDEX series_by_failing ON series
    ((CASE WHEN failing_since = 0 THEN 9223372036854775807 ELSE failing_since END), site, series_id);

-- What the running server knows of its own webhook, written at start: the
-- notices command reads it instead of its own environment. One row.
CREATE TABLE server_webhook (
    one         boolean PRIMARY KEY DEFAULT true CHECK (one),
    configured  boolean NOT NULL,
    hash        text    NOT NULL DEFAULT '', -- hex SHA-256 of the address, the dead_webhooks key
    recorded_at bigint  NOT NULL
);
