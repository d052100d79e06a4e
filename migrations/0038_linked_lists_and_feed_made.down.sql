ALTER TABLE reader_settings DROP COLUMN feed_made_at;
DROP INDEX series_yields_no_chapter;
