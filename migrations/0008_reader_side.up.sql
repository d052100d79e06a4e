-- The Reader's side.

-- When Latest Chapter last reached a new number, so My Bookmarks can say
-- when the chapter was seen and list the most recent chapters first. Kept by
-- a trigger because four writers move the number (the Poll, a Sighting, the
-- owner's correction, a new Series) and none of them should have to
-- remember it; a Poll that confirms the same number leaves it alone. 0 means
-- not known (numbers from before this column).
ALTER TABLE series ADD COLUMN latest_chapter_at bigint NOT NULL DEFAULT 0;

CREATE FUNCTION series_latest_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- A statement that sets the time itself (an import, a test) keeps it.
    IF NEW.latest_chapter_num IS NOT NULL AND (
           (TG_OP = 'INSERT' AND NEW.latest_chapter_at = 0) OR
           (TG_OP = 'UPDATE' AND NEW.latest_chapter_num IS DISTINCT FROM OLD.latest_chapter_num
                             AND NEW.latest_chapter_at = OLD.latest_chapter_at)) THEN
        NEW.latest_chapter_at := (extract(epoch FROM statement_timestamp()) * 1000)::bigint;
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER series_latest_at BEFORE INSERT OR UPDATE OF latest_chapter_num ON series
    FOR EACH ROW EXECUTE FUNCTION series_latest_at();
