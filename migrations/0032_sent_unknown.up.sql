-- A send whose request was written and never answered (a timeout after the
-- body went, a connection reset after writing) may have arrived: it is
-- recorded as sent, never posted again, and marked here so the Lanes page
-- and the notices command count it apart as "may not have arrived"
-- (docs/adr/0005, docs/adr/0017). A stale claim settled as sent is marked
-- too: its holder stopped mid-send, so its outcome is just as unknown.
-- owner_notices keeps carrying only that the owner was told; how the
-- telling went is delivery history, in owner_notice_attempts.
ALTER TABLE announcements ADD COLUMN sent_unknown boolean NOT NULL DEFAULT false;
ALTER TABLE owner_notice_attempts ADD COLUMN sent_unknown boolean NOT NULL DEFAULT false;
