-- The one-time sentence a Reader sees on / after the owner removed a Series
-- they bookmarked (issue 24, item 1): written in the transaction that
-- removes the Series, read once and deleted by the Reader's next home page.
-- It keeps the title, not a key: the Series is gone.
CREATE TABLE removed_series (
    reader_id  text        NOT NULL REFERENCES readers (discord_id) ON DELETE CASCADE,
    title      text        NOT NULL,
    removed_at timestamptz NOT NULL
);
CREATE INDEX removed_series_reader ON removed_series (reader_id);
