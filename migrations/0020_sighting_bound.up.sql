-- A Sighting is bounded by what the Site's page has shown a Poll, and a
-- raised number that Polls keep not confirming is unverified even while
-- they succeed (CONTEXT.md, Sighting; the unverified filter).

-- The highest chapter number a correct read of the Series' page has shown
-- (NULL: none yet). A Sighting may raise Latest Chapter at most
-- word.SightingReach above it. Written only when a read shows a higher
-- number, so a healthy, unchanged Poll stays one statement (the stamp).
ALTER TABLE series ADD COLUMN polled_chapter_num numeric NULL;

-- A number no Reader raised is one a Poll stood behind (or the owner typed).
UPDATE series SET polled_chapter_num = latest_chapter_num
 WHERE latest_raised_by IS NULL AND latest_chapter_num IS NOT NULL;

-- A number raised before migration 0017 kept no raise time: count its
-- twelve hours from now, and read it next (sighted_at after its check).
UPDATE series SET sighted_at = now()
 WHERE latest_raised_by IS NOT NULL AND sighted_at IS NULL;

-- unverified is now "raised by a Reader, and failing or raised more than
-- ownerWindow ago" (store/admin.go): one index over the raised rows, which
-- Polls confirm within minutes, so the set stays small.
DROP INDEX series_unverified_since, series_unverified;
CREATE INDEX series_unverified ON series (site, series_id) INCLUDE (failing_since, sighted_at)
    WHERE latest_raised_by IS NOT NULL AND latest_chapter_num IS NOT NULL;
