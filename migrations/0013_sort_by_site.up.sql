-- The Series list sorted within one Site: the order's key and
-- then the id, led by the Site, so a sorted page of one Site starts where
-- its rows start. The 0010 indexes, led by the key, interleave every Site:
-- among rows of one key (every Series with no failure row) a Site's come
-- after all of the Sites before it, and the walk to its first page grew with
-- the table; titles rarely tie, but a Site's titles are a sixth of the walk.
-- (The check-time order is not here: PostgreSQL 15 keeps reading
-- series_by_checked with the Site as a second-column condition even with
-- such an index beside it; see the plan test.)
CREATE INDEX series_title_by_site ON series (site, title, series_id);
CREATE INDEX series_failing_by_site ON series
    (site, (CASE WHEN failing_since = 0 THEN 9223372036854775807 ELSE failing_since END), series_id);
