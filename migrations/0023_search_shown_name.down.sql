CREATE INDEX series_title_trgm ON series USING gin (title gin_trgm_ops);
DROP INDEX series_shown_trgm;
