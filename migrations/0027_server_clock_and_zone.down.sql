ALTER TABLE server_webhook DROP COLUMN clock_ahead_ms, DROP COLUMN time_zone;
