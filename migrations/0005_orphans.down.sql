DROP INDEX IF EXISTS series_orphan;
DROP TRIGGER IF EXISTS bookmarks_count ON bookmarks;
DROP FUNCTION IF EXISTS bookmarks_count();
ALTER TABLE series DROP COLUMN IF EXISTS bookmark_count;
