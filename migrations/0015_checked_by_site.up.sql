-- The Series list of one Site sorted by last check (migration 0013 left it
-- out): led by the Site, then the check time and the id, so a page of one
-- Site reads its own rows in order instead of walking series_by_checked's
-- entries of every Site before it at each check time (never-checked Series
-- all share one). At 1 000 000 Series PostgreSQL takes this index for the
-- page (BENCHMARKS.md's EXPLAIN notes); on a small table it may still take
-- series_by_checked, whose walk is small there.
CREATE INDEX series_checked_by_site ON series (site, checked_at, series_id);
