-- Since when a Series has been an orphan (ADR 0024): the retention delete
-- (ORPHAN_RETENTION) removes orphans older than the setting. The Bookmark
-- count's trigger (migration 0005) keeps it: cleared by the first Bookmark,
-- stamped when the last one goes. A new Series is born an orphan (the
-- owner's box adds it alone; a Reader's Bookmark follows in the same
-- transaction and clears it). An orphan before this migration is counted
-- from the migration: when it lost its last Bookmark was never kept.
ALTER TABLE series ADD COLUMN orphaned_at timestamptz NULL;
UPDATE series SET orphaned_at = now() WHERE bookmark_count = 0;
ALTER TABLE series ALTER COLUMN orphaned_at SET DEFAULT now();

CREATE OR REPLACE FUNCTION bookmarks_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE series SET bookmark_count = bookmark_count + 1, orphaned_at = NULL
         WHERE site = NEW.site AND series_id = NEW.series_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE series SET bookmark_count = bookmark_count - 1,
               orphaned_at = CASE WHEN bookmark_count = 1 THEN now() ELSE orphaned_at END
         WHERE site = OLD.site AND series_id = OLD.series_id;
    END IF;
    RETURN NULL;
END $$;

-- The retention delete walks one Site's oldest orphans.
CREATE INDEX series_orphaned ON series (site, orphaned_at) WHERE bookmark_count = 0;
