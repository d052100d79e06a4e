DROP TABLE IF EXISTS covers;
DROP INDEX IF EXISTS series_cover_due;
ALTER TABLE series DROP COLUMN IF EXISTS cover_retry_at, DROP COLUMN IF EXISTS cover_tried;
DROP TABLE IF EXISTS api_idempotency;
