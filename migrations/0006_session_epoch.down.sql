ALTER TABLE readers DROP COLUMN IF EXISTS session_epoch;
