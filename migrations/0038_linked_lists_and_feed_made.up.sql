-- The adapter-broken notice and the verdict line link to the list of
-- exactly the Series the condition counts (store/admin.go, the
-- yields-no-chapter filter): not Finished, with an address, a no_chapter
-- failure row. The list walks (site, series_id) like every other filter's
-- list; failing_since rides along for the age cut and the caption count.
CREATE INDEX series_yields_no_chapter ON series (site, series_id) INCLUDE (failing_since)
    WHERE failure_outcome = 'no_chapter' AND finished_at IS NULL AND url <> '';

-- When the Reader's feed address was made: an empty feed says this as its
-- <updated> and its Last-Modified, not 1970 (CONTEXT.md, Feed address).
-- NULL exactly while there is no address. An address made before this
-- migration takes the settings row's last change, the nearest time stored
-- (never earlier than its making, and changed only by a save of /settings).
ALTER TABLE reader_settings ADD COLUMN feed_made_at timestamptz NULL;
UPDATE reader_settings SET feed_made_at = updated_at WHERE feed_secret_hash IS NOT NULL;
