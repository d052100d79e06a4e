-- The token API's Idempotency-Key memory: a write repeated with the same key
-- and body answers the first answer and changes nothing. status 0 marks a
-- key whose first request is still running. Keys are per Reader and live a
-- day (older rows count as absent and are pruned by the writer).
CREATE TABLE api_idempotency (
    reader_id    text   NOT NULL REFERENCES readers (discord_id) ON DELETE CASCADE,
    key          text   NOT NULL,
    request_hash bytea  NOT NULL,
    status       int    NOT NULL DEFAULT 0,
    response     bytea  NOT NULL DEFAULT '',
    created_at   bigint NOT NULL,
    PRIMARY KEY (reader_id, key)
);
CREATE INDEX api_idempotency_age ON api_idempotency (reader_id, created_at);

-- Covers, fetched by the server and served from its own origin. cover_tried
-- is the cover address the last successful fetch read; cover_retry_at is when
-- a failed one may be tried again. A Series is due for a cover fetch while its
-- cover address differs from the one tried; the partial index keeps the
-- Lane's "next cover" read off the rest of the table.
ALTER TABLE series ADD COLUMN cover_tried    text   NOT NULL DEFAULT '',
                   ADD COLUMN cover_retry_at bigint NOT NULL DEFAULT 0;
CREATE INDEX series_cover_due ON series (site, cover_retry_at)
    WHERE cover_url <> '' AND cover_url <> cover_tried;

-- One stored image per Series (its bytes sniffed as an image before they
-- were kept). It outlives a later failed fetch: the old cover beats none.
CREATE TABLE covers (
    site         text   NOT NULL,
    series_id    text   NOT NULL,
    source_url   text   NOT NULL,
    content_type text   NOT NULL,
    etag         text   NOT NULL,
    body         bytea  NOT NULL,
    fetched_at   bigint NOT NULL,
    PRIMARY KEY (site, series_id),
    FOREIGN KEY (site, series_id) REFERENCES series (site, series_id) ON DELETE CASCADE
);
