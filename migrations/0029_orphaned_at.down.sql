DROP INDEX IF EXISTS series_orphaned;
CREATE OR REPLACE FUNCTION bookmarks_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE series SET bookmark_count = bookmark_count + 1
         WHERE site = NEW.site AND series_id = NEW.series_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE series SET bookmark_count = bookmark_count - 1
         WHERE site = OLD.site AND series_id = OLD.series_id;
    END IF;
    RETURN NULL;
END $$;
ALTER TABLE series DROP COLUMN IF EXISTS orphaned_at;
