-- The landing page's freshness figure (how long the last day's new chapters
-- waited to be detected, every Site together, and how many of them no
-- listing named first, so the figure says when it comes from fallback
-- reads), kept by the Lanes: its median and p95 need every Arrival of the
-- day, about N/7 rows at N Series, which no page may read (ADR 0009). A
-- Lane's leader recomputes it after a pass at most once a minute
-- (store.RefreshFreshnessFigure); /admin reads this one row, and computes
-- the figure itself only when no Lane has for five minutes. One row,
-- always present.
CREATE TABLE freshness_figure (
    one         boolean PRIMARY KEY DEFAULT true CHECK (one),
    computed_at timestamptz NOT NULL,
    n           bigint NOT NULL CHECK (n >= 0),
    median_s    float8 NULL,
    p95_s       float8 NULL,
    unlisted    bigint NOT NULL DEFAULT 0 CHECK (unlisted >= 0 AND unlisted <= n)
);
INSERT INTO freshness_figure (computed_at, n) VALUES (timestamptz '-infinity', 0);
