DROP TABLE IF EXISTS dead_webhooks;
DROP TABLE IF EXISTS owner_notice_attempts;
