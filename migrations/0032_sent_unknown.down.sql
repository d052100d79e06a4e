ALTER TABLE owner_notice_attempts DROP COLUMN sent_unknown;
ALTER TABLE announcements DROP COLUMN sent_unknown;
