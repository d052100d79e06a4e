ALTER TABLE server_webhook DROP COLUMN IF EXISTS public_base_url;
