package store

import (
	"context"
	"fmt"
	"time"
)

// ReaderSettings is a Reader's row of reader_settings: which channels they
// turned on (CONTEXT.md, Reader channel), and whether a feed address exists.
// A Reader with no row has every channel off, a digest at 8, in UTC.
type ReaderSettings struct {
	Discord    bool   `db:"discord"`
	Feed       bool   `db:"feed"`
	Push       bool   `db:"push"`
	Digest     bool   `db:"digest"`
	DigestHour int    `db:"digest_hour"`
	Zone       string `db:"zone"`
	// HasFeedSecret: a feed address was made and not revoked. Its secret
	// itself is kept only as a hash.
	HasFeedSecret bool `db:"has_feed_secret"`
	// Saved: the Reader has saved /settings at least once.
	Saved bool `db:"saved"`
}

// DefaultReaderSettings is what a Reader who never saved /settings has.
var DefaultReaderSettings = ReaderSettings{DigestHour: 8, Zone: "UTC"}

const readerSettingsSQL = `
SELECT discord, feed, push, digest, digest_hour, zone,
       feed_secret_hash IS NOT NULL AS has_feed_secret, true AS saved
  FROM reader_settings WHERE reader_id = $1`

// ReaderSettings returns the Reader's settings, or DefaultReaderSettings
// when they never saved any.
func (s *Store) ReaderSettings(ctx context.Context, readerID string) (ReaderSettings, error) {
	v, err := getOne[ReaderSettings](ctx, s, readerSettingsSQL, readerID)
	switch {
	case err == nil:
		return v, nil
	case err == ErrNotFound:
		return DefaultReaderSettings, nil
	}
	return ReaderSettings{}, fmt.Errorf("store: reader settings %s: %w", readerID, err)
}

// saveReaderSettingsSQL writes every switch; the feed address is kept while
// the feed stays on and forgotten when it is turned off, so an address
// lives exactly as long as the feed it opens.
const saveReaderSettingsSQL = `
INSERT INTO reader_settings (reader_id, discord, feed, push, digest, digest_hour, zone, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (reader_id) DO UPDATE
   SET discord = excluded.discord, feed = excluded.feed, push = excluded.push,
       digest = excluded.digest, digest_hour = excluded.digest_hour, zone = excluded.zone,
       feed_secret_hash = CASE WHEN excluded.feed THEN reader_settings.feed_secret_hash END,
       feed_made_at = CASE WHEN excluded.feed THEN reader_settings.feed_made_at END,
       updated_at = excluded.updated_at`

// SaveReaderSettings stores the Reader's switches (HasFeedSecret and Saved
// are ignored). Turning the feed off revokes its address.
func (s *Store) SaveReaderSettings(ctx context.Context, readerID string, v ReaderSettings, now time.Time) error {
	if _, err := s.pool.Exec(ctx, saveReaderSettingsSQL, readerID, v.Discord, v.Feed, v.Push, v.Digest,
		v.DigestHour, v.Zone, instant(now)); err != nil {
		return fmt.Errorf("store: save reader settings %s: %w", readerID, translate(err))
	}
	return nil
}

// pushOnSQL turns the Reader's Web Push on, keeping every other setting.
const pushOnSQL = `
INSERT INTO reader_settings (reader_id, push, updated_at) VALUES ($1, true, $2)
ON CONFLICT (reader_id) DO UPDATE SET push = true, updated_at = excluded.updated_at`

// TurnPushOn turns the Reader's Web Push on: subscribing a browser is
// asking for it, so the subscribe button's sentence is true at once.
func (s *Store) TurnPushOn(ctx context.Context, readerID string, now time.Time) error {
	if _, err := s.pool.Exec(ctx, pushOnSQL, readerID, instant(now)); err != nil {
		return fmt.Errorf("store: turn push on %s: %w", readerID, translate(err))
	}
	return nil
}

// setFeedSecretSQL replaces the feed address (nil hash: revokes it, and
// turns the feed off, since a feed without an address reaches nobody), and
// keeps when the address was made (migration 0038), NULL with no address.
const setFeedSecretSQL = `
INSERT INTO reader_settings (reader_id, feed, feed_secret_hash, feed_made_at, updated_at)
VALUES ($1, $2::bytea IS NOT NULL, $2, CASE WHEN $2::bytea IS NOT NULL THEN $3::timestamptz END, $3)
ON CONFLICT (reader_id) DO UPDATE
   SET feed = excluded.feed, feed_secret_hash = excluded.feed_secret_hash,
       feed_made_at = excluded.feed_made_at, updated_at = excluded.updated_at`

// SetFeedSecret gives the Reader a new feed address, stored as the keyed
// hash of its secret, and turns the feed on; the old address stops
// working. A nil hash revokes the address and turns the feed off.
func (s *Store) SetFeedSecret(ctx context.Context, readerID string, hash []byte, now time.Time) error {
	if _, err := s.pool.Exec(ctx, setFeedSecretSQL, readerID, hash, instant(now)); err != nil {
		return fmt.Errorf("store: set feed secret %s: %w", readerID, translate(err))
	}
	return nil
}

// readerByFeedSecretSQL reads the unique index on feed_secret_hash: the
// secret's hash is compared by equality in the index, never a scan.
const readerByFeedSecretSQL = `SELECT reader_id, coalesce(feed_made_at, updated_at) FROM reader_settings
 WHERE feed_secret_hash = $1 AND feed`

// FeedAddress is the Reader a feed address opens, and when that address
// was made: an empty feed's time (CONTEXT.md, Feed address).
type FeedAddress struct {
	Reader string
	MadeAt time.Time
}

// FeedBySecret returns the feed address whose secret has this hash, or
// ErrNotFound (never made, revoked, or the feed is off).
func (s *Store) FeedBySecret(ctx context.Context, hash []byte) (FeedAddress, error) {
	var a FeedAddress
	if err := s.pool.QueryRow(ctx, readerByFeedSecretSQL, hash).Scan(&a.Reader, &a.MadeAt); err != nil {
		return FeedAddress{}, fmt.Errorf("store: reader by feed secret: %w", translate(err))
	}
	a.MadeAt = a.MadeAt.UTC()
	return a, nil
}

// ReaderByFeedSecret is FeedBySecret's Reader.
func (s *Store) ReaderByFeedSecret(ctx context.Context, hash []byte) (string, error) {
	a, err := s.FeedBySecret(ctx, hash)
	return a.Reader, err
}

// FeedEntry is one Arrival on a Series the Reader bookmarks, above their
// Progress: an entry of their feed.
type FeedEntry struct {
	ID          int64     `db:"id"`
	Site        string    `db:"site"`
	SeriesID    string    `db:"series_id"`
	Chapter     string    `db:"chapter"`
	ChapterURL  string    `db:"chapter_url"`
	ConfirmedAt time.Time `db:"confirmed_at"`
	Title       string    `db:"title"`
	URL         string    `db:"url"`
	// LatestChapter and LatestChapterURL are the Series' now: the latter
	// opens this entry's chapter when the two numbers are the same.
	LatestChapter    string `db:"latest_chapter"`
	LatestChapterURL string `db:"latest_chapter_url"`
}

// FeedLimit is how many entries a feed holds.
const FeedLimit = 100

// feedEntriesSQL: per Bookmark (the bookmarks primary key, reader_id
// first), its Series by key and at most $2 of its Arrivals through
// chapter_arrivals_series, then the newest $2 of those; so a Reader with
// many Bookmarks never reads the whole of series or chapter_arrivals, and a
// Series with many Arrivals gives only its newest. The Series is a LATERAL
// with a LIMIT (its key makes it one row anyway) so that the planner keeps
// the per-Bookmark lookup instead of hashing every Series once a Reader
// bookmarks a tenth of them.
// Never a Finished Series, never a chapter at or below the Reader's
// Progress (CONTEXT.md, Reader channel).
const feedEntriesSQL = `
SELECT a.id, b.site, b.series_id, a.chapter_num::text AS chapter, a.chapter_url, a.confirmed_at,
       s.title, s.url, coalesce(s.latest_chapter_num::text, '') AS latest_chapter, s.latest_chapter_url
  FROM bookmarks b
 CROSS JOIN LATERAL (
       SELECT title, url, latest_chapter_num, latest_chapter_url FROM series s
        WHERE s.site = b.site AND s.series_id = b.series_id AND s.finished_at IS NULL
        LIMIT 1) s
 CROSS JOIN LATERAL (
       SELECT id, chapter_num, chapter_url, confirmed_at FROM chapter_arrivals c
        WHERE c.site = b.site AND c.series_id = b.series_id
          AND c.chapter_num > coalesce(b.progress_num, -1)
        ORDER BY c.confirmed_at DESC, c.id DESC LIMIT $2) a
 WHERE b.reader_id = $1
 ORDER BY a.confirmed_at DESC, a.id DESC
 LIMIT $2`

// FeedEntries returns the Reader's newest FeedLimit feed entries, newest
// first.
func (s *Store) FeedEntries(ctx context.Context, readerID string) ([]FeedEntry, error) {
	v, err := getMany[FeedEntry](ctx, s, feedEntriesSQL, readerID, FeedLimit)
	if err != nil {
		return nil, fmt.Errorf("store: feed entries %s: %w", readerID, err)
	}
	return v, nil
}
