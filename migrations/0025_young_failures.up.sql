-- The landing verdict's "too early to tell" (issue 23, item 1; CONTEXT.md,
-- Verdict line) counts the Series whose failures began less than
-- ownerWindow ago. The figures' partial indexes hold only Series that once
-- read a chapter, and a fresh server's failing Series have none; this one
-- holds every failing Series that is not Finished, ordered by when its
-- failures began, so the capped count is one index-only range per Site.
CREATE INDEX series_failing_young ON series (site, failing_since)
    WHERE failing_since IS NOT NULL AND finished_at IS NULL;
