-- A Sighting on a Series whose page no Poll has read a number from has no
-- bound to be checked against, so it counts for the Reader who made it only
-- (docs/adr/0021, CONTEXT.md: Sighting): kept here, one row per Reader and
-- Series, their highest such number. It reaches Latest Chapter, and so the
-- other Readers and the owner's lists, only when a second Reader's Sighting
-- agrees within the bound (store/chapters.go). The key leads with the
-- Series: the agreement probe reads one Series' rows, the Reader's own list
-- one row per Bookmark.
CREATE TABLE own_sightings (
    site        text        NOT NULL,
    series_id   text        NOT NULL,
    reader_id   text        NOT NULL REFERENCES readers (discord_id) ON DELETE CASCADE,
    chapter_num numeric     NOT NULL,
    chapter_url text        NOT NULL DEFAULT '',
    sighted_at  timestamptz NOT NULL,
    PRIMARY KEY (site, series_id, reader_id),
    FOREIGN KEY (site, series_id) REFERENCES series (site, series_id) ON DELETE CASCADE
);

-- A number one Reader raised where no read ever showed one was that
-- Reader's word alone: it goes back to being theirs only.
INSERT INTO own_sightings (site, series_id, reader_id, chapter_num, chapter_url, sighted_at)
SELECT site, series_id, latest_raised_by, latest_chapter_num, latest_chapter_url, coalesce(sighted_at, now())
  FROM series
 WHERE polled_chapter_num IS NULL AND latest_raised_by IS NOT NULL AND latest_chapter_num IS NOT NULL;
UPDATE series SET latest_chapter_num = NULL, latest_chapter_url = '', latest_raised_by = NULL
 WHERE polled_chapter_num IS NULL AND latest_raised_by IS NOT NULL AND latest_chapter_num IS NOT NULL;

-- "never read" lists a Series until a Poll reaches its page: no read has
-- shown a number (polled_chapter_num, which every read showing one writes),
-- whatever a Sighting or the owner put in Latest Chapter. The predicate is
-- neverReadSQL's text in store/admin.go.
DROP INDEX series_never_checked;
CREATE INDEX series_never_checked ON series (site, series_id)
    WHERE finished_at IS NULL AND (checked_at IS NULL OR (polled_chapter_num IS NULL AND failure_outcome = ''));
