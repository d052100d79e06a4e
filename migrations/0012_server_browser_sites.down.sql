ALTER TABLE server_webhook DROP COLUMN IF EXISTS browser_sites;
