-- Bounded figures (ADR 0009). Every figure and caption count on the owner's
-- pages must read at most a few thousand index entries, at 50 000 Series or
-- at 1 000 000. Two means, both kept in step by the writes that change them:
--
-- 1. The failure row's word and failing-since are copied onto its Series, so
--    failing, unverified and unpollable are predicates on one table and each
--    has a partial index ordered by the column it compares. poll_failures
--    stays the failure state (ADR 0003): the copy is written only by the
--    triggers below, never by application code.
-- 2. Per-Site tallies of the Series the adapter-broken share is taken over
--    (not Finished, with an address) and of those holding a no_chapter
--    failure row, so the share needs no count at all while it is under half.

ALTER TABLE series
    ADD COLUMN failure_outcome text   NOT NULL DEFAULT '',
    ADD COLUMN failing_since   bigint NOT NULL DEFAULT 0;

UPDATE series s SET failure_outcome = f.outcome, failing_since = f.failing_since
  FROM poll_failures f WHERE f.site = s.site AND f.series_id = s.series_id;

-- Statement-level, so a bulk change is one UPDATE and a Poll's single-row
-- write is one more primary-key update, on a transition only.
CREATE FUNCTION poll_failures_copy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE series s SET failure_outcome = '', failing_since = 0
          FROM gone g WHERE s.site = g.site AND s.series_id = g.series_id;
    ELSE
        UPDATE series s SET failure_outcome = n.outcome, failing_since = n.failing_since
          FROM fresh n WHERE s.site = n.site AND s.series_id = n.series_id
           AND (s.failure_outcome, s.failing_since) IS DISTINCT FROM (n.outcome, n.failing_since);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER poll_failures_copy_insert AFTER INSERT ON poll_failures
    REFERENCING NEW TABLE AS fresh FOR EACH STATEMENT EXECUTE FUNCTION poll_failures_copy();
CREATE TRIGGER poll_failures_copy_update AFTER UPDATE ON poll_failures
    REFERENCING NEW TABLE AS fresh FOR EACH STATEMENT EXECUTE FUNCTION poll_failures_copy();
CREATE TRIGGER poll_failures_copy_delete AFTER DELETE ON poll_failures
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION poll_failures_copy();

-- pollable: not Finished, with an address (the adapter-broken share's N);
-- no_chapter: of those, the ones holding a no_chapter failure row (any age).
CREATE TABLE site_tallies (
    site       text   PRIMARY KEY,
    pollable   bigint NOT NULL DEFAULT 0,
    no_chapter bigint NOT NULL DEFAULT 0
);

INSERT INTO site_tallies (site, pollable, no_chapter)
SELECT site, count(*), count(*) FILTER (WHERE failure_outcome = 'no_chapter')
  FROM series WHERE finished_at = 0 AND url <> '' GROUP BY site;

-- Inserts and deletes are counted per statement (a bulk import is one
-- update per Site); the row-level update trigger fires only when a Series
-- changes side (its WHEN clause), never on a check stamp.
CREATE FUNCTION series_tally_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO site_tallies AS t (site, pollable, no_chapter)
        SELECT site, count(*), count(*) FILTER (WHERE failure_outcome = 'no_chapter')
          FROM fresh WHERE finished_at = 0 AND url <> '' GROUP BY site
        ON CONFLICT (site) DO UPDATE SET pollable = t.pollable + excluded.pollable,
                                         no_chapter = t.no_chapter + excluded.no_chapter;
    ELSE
        UPDATE site_tallies t SET pollable = t.pollable - g.n, no_chapter = t.no_chapter - g.nc
          FROM (SELECT site, count(*) AS n, count(*) FILTER (WHERE failure_outcome = 'no_chapter') AS nc
                  FROM gone WHERE finished_at = 0 AND url <> '' GROUP BY site) g
         WHERE t.site = g.site;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER series_tally_insert AFTER INSERT ON series
    REFERENCING NEW TABLE AS fresh FOR EACH STATEMENT EXECUTE FUNCTION series_tally_rows();
CREATE TRIGGER series_tally_delete AFTER DELETE ON series
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION series_tally_rows();

CREATE FUNCTION series_tally_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    was_in boolean := OLD.finished_at = 0 AND OLD.url <> '';
    now_in boolean := NEW.finished_at = 0 AND NEW.url <> '';
    dp     int := now_in::int - was_in::int;
    dn     int := (now_in AND NEW.failure_outcome = 'no_chapter')::int
                - (was_in AND OLD.failure_outcome = 'no_chapter')::int;
BEGIN
    INSERT INTO site_tallies AS t (site, pollable, no_chapter) VALUES (NEW.site, dp, dn)
    ON CONFLICT (site) DO UPDATE SET pollable = t.pollable + dp, no_chapter = t.no_chapter + dn;
    RETURN NULL;
END $$;

CREATE TRIGGER series_tally_change AFTER UPDATE OF url, finished_at, failure_outcome ON series
    FOR EACH ROW
    WHEN ((OLD.finished_at = 0 AND OLD.url <> '') IS DISTINCT FROM (NEW.finished_at = 0 AND NEW.url <> '')
       OR (OLD.failure_outcome = 'no_chapter') IS DISTINCT FROM (NEW.failure_outcome = 'no_chapter'))
    EXECUTE FUNCTION series_tally_change();

-- The figures: each a partial index led by site and ordered by the column
-- its filter compares, so a capped count is a range scan that stops after
-- FigureCap+1 entries (the queries name the Sites with "site = ANY", which
-- PostgreSQL turns into one range per Site).
DROP INDEX series_stale;
CREATE INDEX series_stale_since ON series (site, checked_at)
    WHERE checked_at > 0 AND finished_at = 0;
CREATE INDEX series_failing_since ON series (site, failing_since)
    WHERE failing_since > 0 AND latest_chapter_num IS NOT NULL;
CREATE INDEX series_unverified_since ON series (site, failing_since)
    WHERE failing_since > 0 AND latest_chapter_num IS NOT NULL AND latest_raised_by IS NOT NULL;
CREATE INDEX series_no_chapter_since ON series (site, failing_since)
    WHERE failure_outcome = 'no_chapter' AND finished_at = 0 AND url <> '';
-- The lists: the same sets in the list's keyset order.
CREATE INDEX series_failing ON series (site, series_id) INCLUDE (failing_since)
    WHERE failing_since > 0 AND latest_chapter_num IS NOT NULL;
CREATE INDEX series_unverified ON series (site, series_id) INCLUDE (failing_since)
    WHERE failing_since > 0 AND latest_chapter_num IS NOT NULL AND latest_raised_by IS NOT NULL;
CREATE INDEX series_unpollable ON series (site, series_id)
    WHERE finished_at = 0 AND (url = '' OR failure_outcome = 'unfetchable');
-- A kind is read as its Sites (a Series' kind is its Site's), so the lists
-- no longer need an index led by kind.
DROP INDEX series_kind;

-- Read from series now; nothing else asks these.
DROP INDEX poll_failures_since;
DROP INDEX poll_failures_unfetchable;
DROP INDEX poll_failures_site_outcome;
