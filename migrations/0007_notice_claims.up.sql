-- Who is sending an open notice right now, and since when (docs/adr/0005).
-- A claim is one committed row, taken before the POST to Discord and removed
-- when its answer is recorded, so no connection or row lock is held while the
-- webhook is asked. A claim older than the notifier's bound belongs to a
-- process that stopped mid-send: the next process settles it as sent (the
-- message may have gone), so an episode never sends twice.
CREATE TABLE owner_notice_claims (
    kind       text   NOT NULL,
    site       text   NOT NULL,
    claimed_by text   NOT NULL,
    claimed_at bigint NOT NULL,
    PRIMARY KEY (kind, site),
    FOREIGN KEY (kind, site) REFERENCES owner_notices (kind, site) ON DELETE CASCADE
);
