-- Admin surface (CONTEXT.md, Rules: Unpollable). The unpollable filter's second half: Series whose
-- failure row says the fetch gate refused the stored address. Small and
-- keyed like the list, so both the list and its figure start from it.
CREATE INDEX poll_failures_unfetchable ON poll_failures (site, series_id)
    WHERE outcome = 'unfetchable';
