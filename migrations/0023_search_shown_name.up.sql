-- The owner's search reads what a row shows (issue 23, item 5): the title,
-- or while the title is unknown the address's last segment with its dashes
-- as spaces (the name adapters.NameFromAddress makes of it), or the
-- series_id when there is no address. store.shownNameSQL is this very
-- expression, so `shown ILIKE '%word%'` reads this trigram index instead of
-- every row; the title-only index it replaces is no longer read.
CREATE INDEX series_shown_trgm ON series USING gin ((
    CASE WHEN btrim(title) <> '' THEN title
         WHEN url <> '' THEN translate(substring(url FROM '([^/]*)/*$'), '-', ' ')
         ELSE series_id END) gin_trgm_ops);
DROP INDEX series_title_trgm;
