DROP TRIGGER IF EXISTS series_latest_at ON series;
DROP FUNCTION IF EXISTS series_latest_at();
ALTER TABLE series DROP COLUMN IF EXISTS latest_chapter_at;
