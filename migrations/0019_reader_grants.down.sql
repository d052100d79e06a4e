ALTER TABLE readers DROP COLUMN guild_check_due_at;
ALTER TABLE readers DROP COLUMN discord_refresh;
