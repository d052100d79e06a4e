-- The orphan filter and its figure must not scan the whole table, and "no
-- Bookmark exists" cannot be found through an index. So each Series keeps
-- how many Bookmarks it has, written only by these triggers (Bookmarks are
-- added and removed rarely; a Poll never touches them), and a partial index
-- holds the orphans. The orphan guard itself stays the foreign key: a
-- Bookmark still refuses the delete of its Series.
ALTER TABLE series ADD COLUMN bookmark_count int NOT NULL DEFAULT 0;

UPDATE series s SET bookmark_count = b.n
  FROM (SELECT site, series_id, count(*) AS n FROM bookmarks GROUP BY site, series_id) b
 WHERE b.site = s.site AND b.series_id = s.series_id;

CREATE FUNCTION bookmarks_count() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER bookmarks_count AFTER INSERT OR DELETE ON bookmarks
    FOR EACH ROW EXECUTE FUNCTION bookmarks_count();

CREATE INDEX series_orphan ON series (site, series_id) WHERE bookmark_count = 0;
