-- Freshness (ADR 0016): the Lane reads its Site's latest-updates listing,
-- and spends the rest of its requests on the Series most likely to have
-- changed. Every column a Poll writes on its healthy path is written by its
-- one statement, the check stamp.

ALTER TABLE series
    -- When the scheduler next owes this Series a read: its cadence, or the
    -- backstop (CONTEXT.md, Backstop). NULL: never read, first of all.
    ADD COLUMN next_read_at timestamptz NULL,
    -- When a Reader's Sighting last raised Latest Chapter: the Series is
    -- urgent while this is after its check.
    ADD COLUMN sighted_at timestamptz NULL,
    -- The number the listing last named above Latest Chapter, and when it was
    -- first seen there: urgent while listed_at is after the check.
    ADD COLUMN listed_chapter_num numeric NULL,
    ADD COLUMN listed_at timestamptz NULL,
    -- When a Poll last confirmed a new chapter, and the learned time between
    -- two such (seconds; NULL until two arrivals).
    ADD COLUMN chapter_arrived_at timestamptz NULL,
    ADD COLUMN cadence_s integer NULL CHECK (cadence_s > 0);

-- A Series read before this migration keeps the pace it had (POLL_EVERY's
-- default, an hour after its check); the scheduler takes over at its next read.
UPDATE series SET next_read_at = checked_at + interval '1 hour' WHERE checked_at IS NOT NULL;

-- The due query's arms (store/poll.go, dueSeriesSQL), each on its own
-- partial index, so none reads a Finished Series or one without an address.
CREATE INDEX series_next ON series (site, (coalesce(next_read_at, timestamptz '-infinity')))
    WHERE finished_at IS NULL AND url <> '';
CREATE INDEX series_ahead ON series (site, (coalesce(next_read_at, timestamptz '-infinity')))
    WHERE finished_at IS NULL AND url <> '' AND bookmark_count > 0;
CREATE INDEX series_ahead_checked ON series (site, (coalesce(checked_at, timestamptz '-infinity')))
    WHERE finished_at IS NULL AND url <> '' AND bookmark_count > 0;
CREATE INDEX series_sighted ON series (site, sighted_at)
    WHERE finished_at IS NULL AND url <> '' AND sighted_at > coalesce(checked_at, timestamptz '-infinity');
CREATE INDEX series_listed ON series (site, listed_at)
    WHERE finished_at IS NULL AND url <> '' AND listed_at > coalesce(checked_at, timestamptz '-infinity');

-- One row per new chapter a Poll confirmed (CONTEXT.md, Arrival): the
-- freshness figures read it, and Reader announcements will. noticed_at is
-- the first evidence the chapter existed: the listing or a Sighting naming
-- it, else the read before this one (which did not have it).
CREATE TABLE chapter_arrivals (
    id           bigserial   PRIMARY KEY,
    site         text        NOT NULL,
    series_id    text        NOT NULL,
    chapter_num  numeric     NOT NULL,
    chapter_url  text        NOT NULL DEFAULT '',
    confirmed_at timestamptz NOT NULL,
    noticed_at   timestamptz NOT NULL,
    listed       boolean     NOT NULL DEFAULT false,
    FOREIGN KEY (site, series_id) REFERENCES series (site, series_id) ON DELETE CASCADE
);
CREATE INDEX chapter_arrivals_site_confirmed ON chapter_arrivals (site, confirmed_at);
CREATE INDEX chapter_arrivals_confirmed ON chapter_arrivals (confirmed_at);
CREATE INDEX chapter_arrivals_series ON chapter_arrivals (site, series_id);

-- What each pass did with the listing: pages read, rows read, known Series
-- it made due, and the outcome word of its last page ('' when none read).
ALTER TABLE poll_passes
    ADD COLUMN listing_pages   int  NOT NULL DEFAULT 0,
    ADD COLUMN listing_entries int  NOT NULL DEFAULT 0,
    ADD COLUMN listing_marked  int  NOT NULL DEFAULT 0,
    ADD COLUMN listing_outcome text NOT NULL DEFAULT '';

-- The Lane's listing state: the last read, the last read that named any
-- Series, and since when every read parsed to nothing (NULL: not now). A
-- listing that parses to nothing for twelve hours is broken (ADR 0016).
ALTER TABLE poll_lanes
    ADD COLUMN listing_read_at     timestamptz NULL,
    ADD COLUMN listing_ok_at       timestamptz NULL,
    ADD COLUMN listing_empty_since timestamptz NULL;
