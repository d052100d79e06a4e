-- Reader announcements (issue: Readers hear about new chapters): each
-- Reader's channels, their Web Push subscriptions, and the record that
-- makes each (Reader, channel, Series, chapter) announced once.

-- One row per Reader who has saved /settings; none means every channel off.
CREATE TABLE reader_settings (
    reader_id   text     PRIMARY KEY REFERENCES readers (discord_id) ON DELETE CASCADE,
    discord     boolean  NOT NULL DEFAULT false,
    feed        boolean  NOT NULL DEFAULT false,
    push        boolean  NOT NULL DEFAULT false,
    -- digest: one message a day at digest_hour in zone, instead of at once.
    digest      boolean  NOT NULL DEFAULT false,
    digest_hour smallint NOT NULL DEFAULT 8 CHECK (digest_hour BETWEEN 0 AND 23),
    zone        text     NOT NULL DEFAULT 'UTC',
    -- The private feed address's secret, stored only as its HMAC (like the
    -- API tokens); NULL: no feed address made yet, or revoked.
    feed_secret_hash bytea NULL UNIQUE,
    updated_at  timestamptz NOT NULL
);

-- A browser a Reader subscribed to Web Push.
CREATE TABLE push_subscriptions (
    id         bigserial   PRIMARY KEY,
    reader_id  text        NOT NULL REFERENCES readers (discord_id) ON DELETE CASCADE,
    endpoint   text        NOT NULL UNIQUE,
    p256dh     text        NOT NULL,
    auth       text        NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX push_subscriptions_reader ON push_subscriptions (reader_id);

-- One row per (Reader, channel, Series, chapter) decided to be announced:
-- claimed, then sent (or failed and retried). Its primary key is what makes
-- an announcement happen once, across crashes and replicas (ADR 0005's
-- claim, send, record).
CREATE TABLE announcements (
    reader_id   text        NOT NULL REFERENCES readers (discord_id) ON DELETE CASCADE,
    channel     text        NOT NULL CHECK (channel IN ('discord', 'push', 'feed')),
    site        text        NOT NULL,
    series_id   text        NOT NULL,
    chapter_num numeric     NOT NULL,
    arrival_id  bigint      NOT NULL REFERENCES chapter_arrivals (id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL,
    claimed_at  timestamptz NULL,
    sent_at     timestamptz NULL,
    failed_at   timestamptz NULL,
    attempts    int         NOT NULL DEFAULT 0,
    last_error  text        NOT NULL DEFAULT '',
    PRIMARY KEY (reader_id, channel, site, series_id, chapter_num),
    FOREIGN KEY (site, series_id) REFERENCES series (site, series_id) ON DELETE CASCADE
);
-- The unsent, in the order they are sent; and the last day's, for the
-- owner's delivery counts.
CREATE INDEX announcements_unsent ON announcements (channel, created_at) WHERE sent_at IS NULL;
CREATE INDEX announcements_created ON announcements (created_at);
CREATE INDEX announcements_arrival ON announcements (arrival_id);
