-- The failing line on /admin (issue 23, item 11): how many Series of each
-- Site the failing filter held, once an hour, written by the Site's Lane
-- after a pass (store/history.go). One row per Site and hour, the hour as
-- its start; the Lane deletes rows older than eight days as it writes, so
-- the table holds about 6 × 192 rows. The count is the figure's own capped
-- count (ADR 0009): a value above 1000 means "more than 1000".
CREATE TABLE failing_history (
    site    text NOT NULL,
    at      timestamptz NOT NULL,
    failing integer NOT NULL CHECK (failing >= 0),
    PRIMARY KEY (site, at)
);
