-- Times are bigint unix milliseconds; 0 means never. Chapter numbers are numeric.

CREATE TABLE readers (
    discord_id   text   PRIMARY KEY,
    name         text   NOT NULL DEFAULT '',
    avatar_url   text   NOT NULL DEFAULT '',
    created_at   bigint NOT NULL,
    last_seen_at bigint NOT NULL DEFAULT 0
);

-- Userscript tokens, stored only as an HMAC under TOKEN_KEY.
CREATE TABLE reader_tokens (
    id           bigserial PRIMARY KEY,
    reader_id    text   NOT NULL REFERENCES readers (discord_id) ON DELETE CASCADE,
    token_hash   bytea  NOT NULL UNIQUE,
    label        text   NOT NULL DEFAULT '',
    created_at   bigint NOT NULL,
    last_used_at bigint NOT NULL DEFAULT 0
);
CREATE INDEX reader_tokens_reader ON reader_tokens (reader_id);

-- One-time sign-in links printed on the console when Discord OAuth is not
-- configured. Consuming one is a single DELETE ... RETURNING.
CREATE TABLE login_links (
    token_hash bytea  PRIMARY KEY,
    discord_id text   NOT NULL,
    expires_at bigint NOT NULL
);

CREATE TABLE series (
    site               text    NOT NULL,
    series_id          text    NOT NULL,
    url                text    NOT NULL DEFAULT '',
    title              text    NOT NULL DEFAULT '',
    cover_url          text    NOT NULL DEFAULT '',
    kind               text    NOT NULL CHECK (kind IN ('manga', 'novel')),
    latest_chapter_num numeric NULL,
    latest_chapter_url text    NOT NULL DEFAULT '',
    latest_raised_by   text    NULL REFERENCES readers (discord_id) ON DELETE SET NULL,
    checked_at         bigint  NOT NULL DEFAULT 0,
    force_poll_at      bigint  NOT NULL DEFAULT 0,
    finished_at        bigint  NOT NULL DEFAULT 0,
    site_completed_at  bigint  NOT NULL DEFAULT 0,
    created_at         bigint  NOT NULL,
    PRIMARY KEY (site, series_id)
);

-- The due query: per Site, not Finished, with an address, oldest check first.
CREATE INDEX series_due ON series (site, checked_at)
    WHERE finished_at = 0 AND url <> '';
-- ... or a Forced Poll not yet served.
CREATE INDEX series_forced ON series (site, force_poll_at)
    WHERE finished_at = 0 AND url <> '' AND force_poll_at > checked_at;
-- Admin filters: each a partial index in the list's keyset order (site, series_id).
CREATE INDEX series_never_checked ON series (site, series_id)
    WHERE checked_at = 0 AND finished_at = 0;
CREATE INDEX series_stale ON series (checked_at)
    WHERE checked_at > 0 AND finished_at = 0;
CREATE INDEX series_no_address ON series (site, series_id)
    WHERE url = '' AND finished_at = 0;
CREATE INDEX series_no_chapter ON series (site, series_id)
    WHERE latest_chapter_num IS NULL AND checked_at > 0 AND finished_at = 0;
CREATE INDEX series_site_completed ON series (site, series_id)
    WHERE site_completed_at > 0 AND finished_at = 0;
CREATE INDEX series_finished ON series (site, series_id)
    WHERE finished_at > 0;
CREATE INDEX series_raised ON series (site, series_id)
    WHERE latest_raised_by IS NOT NULL;
CREATE INDEX series_kind ON series (kind, site, series_id);

-- No cascade from series: a Bookmark refuses the delete of its Series. That
-- refusal is the orphan guard, so deleting an orphan is one statement.
CREATE TABLE bookmarks (
    reader_id    text    NOT NULL REFERENCES readers (discord_id) ON DELETE CASCADE,
    site         text    NOT NULL,
    series_id    text    NOT NULL,
    progress_num numeric NULL,
    progress_url text    NOT NULL DEFAULT '',
    created_at   bigint  NOT NULL,
    updated_at   bigint  NOT NULL,
    PRIMARY KEY (reader_id, site, series_id),
    FOREIGN KEY (site, series_id) REFERENCES series (site, series_id) ON DELETE RESTRICT
);
CREATE INDEX bookmarks_series ON bookmarks (site, series_id);

CREATE TABLE poll_lanes (
    site          text   PRIMARY KEY,
    paused_until  bigint NOT NULL DEFAULT 0,
    refuse_until  bigint NOT NULL DEFAULT 0,
    force_poll_at bigint NOT NULL DEFAULT 0
);
INSERT INTO poll_lanes (site) VALUES
    ('asurascans'), ('demonicscans'), ('comix'), ('kagane'), ('novelfull'), ('lightnovelworld');

-- The pass log: one row per pass of a Lane.
CREATE TABLE poll_passes (
    id          bigserial PRIMARY KEY,
    site        text   NOT NULL,
    started_at  bigint NOT NULL,
    finished_at bigint NOT NULL,
    due         int    NOT NULL DEFAULT 0,
    checked     int    NOT NULL DEFAULT 0,
    skip        text   NOT NULL DEFAULT '',
    refused     int    NOT NULL DEFAULT 0,
    ok          int    NOT NULL DEFAULT 0,
    no_chapter  int    NOT NULL DEFAULT 0,
    unfetchable int    NOT NULL DEFAULT 0,
    not_found   int    NOT NULL DEFAULT 0,
    errors      int    NOT NULL DEFAULT 0,
    unreachable int    NOT NULL DEFAULT 0
);
CREATE INDEX poll_passes_site_started ON poll_passes (site, started_at);

-- The row's existence is the failure state (ADR 0003).
CREATE TABLE poll_failures (
    site          text   NOT NULL,
    series_id     text   NOT NULL,
    outcome       text   NOT NULL,
    failing_since bigint NOT NULL,
    PRIMARY KEY (site, series_id),
    FOREIGN KEY (site, series_id) REFERENCES series (site, series_id) ON DELETE CASCADE
);
CREATE INDEX poll_failures_site_outcome ON poll_failures (site, outcome, failing_since);
CREATE INDEX poll_failures_since ON poll_failures (failing_since);

-- One row per episode of an owner notice; its insertion is the lock (CONTEXT.md, Owner notice).
-- site is '' for sidecar-down. notified_at is 0 until Discord accepted the message.
CREATE TABLE owner_notices (
    kind        text   NOT NULL,
    site        text   NOT NULL,
    notified_at bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, site)
);
