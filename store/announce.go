package store

import (
	"context"
	"fmt"
	"time"

	"github.com/mangabookmark/mangabookmark/word"
)

// Reader announcements (CONTEXT.md, Announcement; docs/adr/0017). An
// announcements row is the once-only record of one (Reader, channel, Series,
// chapter): it is inserted when a pass decides the Reader is owed it, then
// claimed, sent with no connection held, and recorded (ADR 0005's shape).

// AnnounceWindow is how far back a pass looks for Arrivals to announce.
// Every pass of a Site re-reads its last day of Arrivals and inserts what is
// missing (ON CONFLICT DO NOTHING), so no cursor has to survive a crash: an
// Arrival is decided on the first pass after it, or the next one.
const AnnounceWindow = 24 * time.Hour

// recordAnnouncementsSQL decides: for each Arrival of the Site ($1) since $2,
// each Reader who bookmarks its Series, is behind it (never a chapter read),
// on a Series not Finished, gets a row per channel they turned on. Discord
// needs the Readers' webhook ($4) and a Discord id (a snowflake: digits; a
// local Reader's "local-…" id is not one); push needs a subscription. The
// feed reads chapter_arrivals itself and gets no row. chapter_arrivals holds
// only numbers a Poll confirmed after the Series' first read, so a
// Sighting-only number and a first read have no Arrival to announce.
//
// It walks chapter_arrivals_site_confirmed, then the Series' bookmarks
// (bookmarks_series) and each Reader's settings by primary key.
const recordAnnouncementsSQL = `
INSERT INTO announcements (reader_id, channel, site, series_id, chapter_num, arrival_id, created_at)
SELECT b.reader_id, ch.channel, a.site, a.series_id, a.chapter_num, a.id, $3
FROM chapter_arrivals a
-- LIMIT 1 and OFFSET 0 keep the subqueries from being flattened: each is
-- an index probe per Arrival (series_pkey, bookmarks_series), never a hash
-- of the Site's whole catalogue or every Bookmark.
CROSS JOIN LATERAL (SELECT s.finished_at FROM series s
    WHERE s.site = a.site AND s.series_id = a.series_id LIMIT 1) s
CROSS JOIN LATERAL (SELECT b.reader_id FROM bookmarks b
    WHERE b.site = a.site AND b.series_id = a.series_id
      AND (b.progress_num IS NULL OR b.progress_num < a.chapter_num) OFFSET 0) b
JOIN reader_settings rs ON rs.reader_id = b.reader_id
CROSS JOIN LATERAL (VALUES
    ('discord', rs.discord AND $4::boolean AND b.reader_id ~ '^[0-9]+$'),
    ('push', rs.push AND EXISTS (SELECT 1 FROM push_subscriptions p WHERE p.reader_id = b.reader_id))
) AS ch(channel, wanted)
WHERE a.site = $1 AND a.confirmed_at >= $2 AND s.finished_at IS NULL AND ch.wanted
ON CONFLICT DO NOTHING`

// RecordAnnouncements inserts the announcements the Site's Arrivals since
// `since` owe, stamped created at now; discord says whether the Discord
// channel is on (configured, and its webhook alive). It returns how many
// rows are new.
func (s *Store) RecordAnnouncements(ctx context.Context, site string, since, now time.Time, discord bool) (int64, error) {
	tag, err := s.pool.Exec(ctx, recordAnnouncementsSQL, site, instant(since), instant(now), discord)
	if err != nil {
		return 0, fmt.Errorf("store: record announcements of %s: %w", site, translate(err))
	}
	return tag.RowsAffected(), nil
}

// AnnounceGone is the last_error of a delivery whose endpoint is gone for
// good (announce.ErrGone): such a row is not tried again.
const AnnounceGone = "gone"

// Unsent is one announcement not yet sent, with what its message needs and
// the Reader's digest settings (the caller decides whether it is due).
type Unsent struct {
	ReaderID   string       `db:"reader_id"`
	Channel    word.Channel `db:"channel"`
	Site       string       `db:"site"`
	SeriesID   string       `db:"series_id"`
	Chapter    string       `db:"chapter"`
	ChapterURL string       `db:"chapter_url"`
	CreatedAt  time.Time    `db:"created_at"`
	Title      string       `db:"title"`
	SeriesURL  string       `db:"series_url"`
	HasCover   bool         `db:"has_cover"`
	Digest     bool         `db:"digest"`
	DigestHour int          `db:"digest_hour"`
	Zone       string       `db:"zone"`
}

// unsentSQL lists the Site's ($1) unsent announcements on a channel ($2)
// that are not claimed, oldest first,
// from the announcements_unsent partial index. A row whose endpoint was
// gone is left out.
const unsentSQL = `
SELECT n.reader_id, n.channel, n.site, n.series_id, n.chapter_num::text AS chapter,
       a.chapter_url, n.created_at, s.title, s.url AS series_url, s.cover_tried <> '' AS has_cover,
       coalesce(rs.digest, false) AS digest, coalesce(rs.digest_hour, 0) AS digest_hour,
       coalesce(rs.zone, 'UTC') AS zone
FROM announcements n
JOIN chapter_arrivals a ON a.id = n.arrival_id
JOIN series s ON s.site = n.site AND s.series_id = n.series_id
LEFT JOIN reader_settings rs ON rs.reader_id = n.reader_id
WHERE n.channel = $2 AND n.sent_at IS NULL AND n.site = $1
  AND n.claimed_at IS NULL
  AND NOT (n.failed_at IS NOT NULL AND n.last_error = '` + AnnounceGone + `')
ORDER BY n.created_at
LIMIT 1000`

// UnsentAnnouncements lists the Site's unsent, unclaimed announcements on
// channel (a stale claim is settled first: SettleStaleAnnouncements).
func (s *Store) UnsentAnnouncements(ctx context.Context, site string, ch word.Channel) ([]Unsent, error) {
	rows, err := getMany[Unsent](ctx, s, unsentSQL, site, ch)
	if err != nil {
		return nil, fmt.Errorf("store: unsent announcements of %s: %w", site, err)
	}
	return rows, nil
}

// AnnouncementKey names one announcements row of a known channel and Site.
type AnnouncementKey struct {
	ReaderID, SeriesID, Chapter string
}

func keyArrays(keys []AnnouncementKey) (readers, series, chapters []string) {
	for _, k := range keys {
		readers, series, chapters = append(readers, k.ReaderID), append(series, k.SeriesID), append(chapters, k.Chapter)
	}
	return readers, series, chapters
}

// claimAnnouncementsSQL claims the given rows at $6 when unsent and
// unclaimed. Under READ
// COMMITTED an UPDATE re-reads a row another claimer changed meanwhile, so
// of two replicas one claims each row.
const claimAnnouncementsSQL = `
UPDATE announcements n SET claimed_at = $6
FROM unnest($3::text[], $4::text[], $5::text[]) AS k(reader_id, series_id, chapter)
WHERE n.channel = $1 AND n.site = $2 AND n.reader_id = k.reader_id AND n.series_id = k.series_id
  AND n.chapter_num = k.chapter::numeric AND n.sent_at IS NULL AND n.claimed_at IS NULL
RETURNING n.reader_id, n.series_id, n.chapter_num::text`

// ClaimAnnouncements claims keys on (ch, site) at the wall-clock time at
// and returns the keys it won. The claim commits at once: nothing is held
// while they are sent.
func (s *Store) ClaimAnnouncements(ctx context.Context, ch word.Channel, site string, keys []AnnouncementKey, at time.Time) ([]AnnouncementKey, error) {
	r, se, c := keyArrays(keys)
	rows, err := s.pool.Query(ctx, claimAnnouncementsSQL, ch, site, r, se, c, instant(at))
	if err != nil {
		return nil, fmt.Errorf("store: claim announcements of %s: %w", site, translate(err))
	}
	defer rows.Close()
	var won []AnnouncementKey
	for rows.Next() {
		var k AnnouncementKey
		if err := rows.Scan(&k.ReaderID, &k.SeriesID, &k.Chapter); err != nil {
			return nil, fmt.Errorf("store: claim announcements of %s: %w", site, translate(err))
		}
		won = append(won, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: claim announcements of %s: %w", site, translate(err))
	}
	return won, nil
}

// AnnounceResult is what one claimed send did for some rows: sent at At, or
// failed at At with Err (free of secrets; AnnounceGone when the endpoint is
// gone for good). Unknown, with Err saying why, is a send whose request was
// written and never answered: it may have arrived, so it is recorded as sent
// and never posted again (docs/adr/0017).
type AnnounceResult struct {
	Keys    []AnnouncementKey
	At      time.Time
	Err     string
	Unknown bool
}

// Both writes act only on rows still claimed at $6 by this claimer: a claim
// taken over as stale (and settled) takes the late answer with it.
const recordAnnouncementsSentSQL = `
UPDATE announcements n SET sent_at = $7, claimed_at = NULL
FROM unnest($3::text[], $4::text[], $5::text[]) AS k(reader_id, series_id, chapter)
WHERE n.channel = $1 AND n.site = $2 AND n.reader_id = k.reader_id AND n.series_id = k.series_id
  AND n.chapter_num = k.chapter::numeric AND n.sent_at IS NULL AND n.claimed_at = $6`

const recordAnnouncementsUnknownSQL = `
UPDATE announcements n SET sent_at = $7, sent_unknown = true, claimed_at = NULL, attempts = n.attempts + 1, last_error = $8
FROM unnest($3::text[], $4::text[], $5::text[]) AS k(reader_id, series_id, chapter)
WHERE n.channel = $1 AND n.site = $2 AND n.reader_id = k.reader_id AND n.series_id = k.series_id
  AND n.chapter_num = k.chapter::numeric AND n.sent_at IS NULL AND n.claimed_at = $6`

const recordAnnouncementsFailedSQL = `
UPDATE announcements n SET failed_at = $7, claimed_at = NULL, attempts = n.attempts + 1, last_error = $8
FROM unnest($3::text[], $4::text[], $5::text[]) AS k(reader_id, series_id, chapter)
WHERE n.channel = $1 AND n.site = $2 AND n.reader_id = k.reader_id AND n.series_id = k.series_id
  AND n.chapter_num = k.chapter::numeric AND n.sent_at IS NULL AND n.claimed_at = $6`

// RecordAnnounced writes what a send claimed at claimedAt did and lets
// the claim go.
func (s *Store) RecordAnnounced(ctx context.Context, ch word.Channel, site string, claimedAt time.Time, res AnnounceResult) error {
	r, se, c := keyArrays(res.Keys)
	var err error
	switch {
	case res.Unknown:
		_, err = s.pool.Exec(ctx, recordAnnouncementsUnknownSQL, ch, site, r, se, c, instant(claimedAt), instant(res.At), res.Err)
	case res.Err == "":
		_, err = s.pool.Exec(ctx, recordAnnouncementsSentSQL, ch, site, r, se, c, instant(claimedAt), instant(res.At))
	default:
		_, err = s.pool.Exec(ctx, recordAnnouncementsFailedSQL, ch, site, r, se, c, instant(claimedAt), instant(res.At), res.Err)
	}
	if err != nil {
		return fmt.Errorf("store: record announcements of %s: %w", site, translate(err))
	}
	return nil
}

// settleAnnouncementsSQL counts a claim older than $3 as sent at its claim
// time, its outcome unknown: its holder stopped between the claim and the
// record, and the message may have gone (ADR 0005: a missed message is the
// smaller fault).
const settleAnnouncementsSQL = `
UPDATE announcements SET sent_at = claimed_at, sent_unknown = true, claimed_at = NULL
WHERE channel = $1 AND site = $2 AND sent_at IS NULL AND claimed_at < $3`

// SettleStaleAnnouncements counts the Site's claims older than staleBefore
// as sent and says how many there were.
func (s *Store) SettleStaleAnnouncements(ctx context.Context, ch word.Channel, site string, staleBefore time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, settleAnnouncementsSQL, ch, site, instant(staleBefore))
	if err != nil {
		return 0, fmt.Errorf("store: settle announcements of %s: %w", site, translate(err))
	}
	return tag.RowsAffected(), nil
}

// dropMootSQL deletes the Site's unsent, unclaimed announcements that are
// no longer news: the Reader has read that chapter since (a digest waits up
// to a day), removed the Bookmark, or the Series was Finished. Nothing was
// sent, so nothing is lost; the decision would not be taken again.
const dropMootSQL = `
DELETE FROM announcements n
WHERE n.channel = $1 AND n.site = $2 AND n.sent_at IS NULL AND n.claimed_at IS NULL
  AND NOT EXISTS (
    SELECT 1 FROM bookmarks b JOIN series s ON s.site = b.site AND s.series_id = b.series_id
    WHERE b.reader_id = n.reader_id AND b.site = n.site AND b.series_id = n.series_id
      AND s.finished_at IS NULL
      AND (b.progress_num IS NULL OR b.progress_num < n.chapter_num))`

// DropMootAnnouncements deletes the Site's unsent announcements on ch that
// are no longer news (dropMootSQL) and says how many.
func (s *Store) DropMootAnnouncements(ctx context.Context, ch word.Channel, site string) (int64, error) {
	tag, err := s.pool.Exec(ctx, dropMootSQL, ch, site)
	if err != nil {
		return 0, fmt.Errorf("store: drop moot announcements of %s: %w", site, translate(err))
	}
	return tag.RowsAffected(), nil
}

// ChannelDelivery is one channel's announcements sent, sent with no answer
// (Unknown: they may not have arrived) and failed (unsent, last attempt
// failed) in a window, for the owner's Lanes page and the notices command.
type ChannelDelivery struct {
	Channel word.Channel `db:"channel"`
	Sent    int          `db:"sent"`
	Unknown int          `db:"unknown"`
	Failed  int          `db:"failed"`
	// ReadersDeadAt is when the Readers' webhook answered 404 (the same on
	// every row; zero while alive or unasked).
	ReadersDeadAt time.Time `db:"readers_dead_at"`
}

// deliveryCountsSQL: one row per announced channel, reading the rows
// created in the last two windows (an announcement sent in the window was
// created at most a day before it: a digest waits up to a day) through
// announcements_created, and the Readers' webhook's dead_webhooks row ($3),
// so the Lanes page adds one statement, not two.
const deliveryCountsSQL = `
WITH c AS (
    SELECT channel,
           count(*) FILTER (WHERE sent_at >= $1 AND NOT sent_unknown)::int AS sent,
           count(*) FILTER (WHERE sent_at >= $1 AND sent_unknown)::int AS unknown,
           count(*) FILTER (WHERE sent_at IS NULL AND failed_at >= $1)::int AS failed
    FROM announcements
    WHERE created_at >= $2
    GROUP BY channel)
SELECT ch.channel, coalesce(c.sent, 0) AS sent, coalesce(c.unknown, 0) AS unknown, coalesce(c.failed, 0) AS failed,
       (SELECT max(dead_at) FROM dead_webhooks WHERE url_hash = $3) AS readers_dead_at
FROM (VALUES ('discord'), ('push')) AS ch(channel)
LEFT JOIN c ON c.channel = ch.channel
ORDER BY ch.channel`

// DeliveryCounts counts each channel's announcements sent, sent unknown and
// failed since
// `since`; readersHash is the Readers' webhook's dead_webhooks key ("" when
// none).
func (s *Store) DeliveryCounts(ctx context.Context, since time.Time, readersHash string) ([]ChannelDelivery, error) {
	rows, err := getMany[ChannelDelivery](ctx, s, deliveryCountsSQL, instant(since), instant(since.Add(-AnnounceWindow)), readersHash)
	if err != nil {
		return nil, fmt.Errorf("store: announcement delivery counts: %w", err)
	}
	return rows, nil
}

// DeliveryCounts queues DeliveryCounts's read into dst, for a page that
// sends its reads in one round trip.
func (b *Batch) DeliveryCounts(since time.Time, readersHash string, dst *[]ChannelDelivery) {
	queueMany(b, "announcement delivery counts", dst, deliveryCountsSQL, instant(since), instant(since.Add(-AnnounceWindow)), readersHash)
}

// FailingChannel is a channel whose oldest unsent, failed announcement was
// created at Since.
type FailingChannel struct {
	Channel word.Channel `db:"channel"`
	Since   time.Time    `db:"since"`
}

// failingChannelsSQL: per channel, the oldest unsent row that failed, from
// the announcements_unsent partial index (channel, created_at).
const failingChannelsSQL = `
SELECT c.channel, f.created_at AS since
FROM unnest($2::text[]) AS c(channel)
CROSS JOIN LATERAL (
    SELECT n.created_at FROM announcements n
    WHERE n.channel = c.channel AND n.sent_at IS NULL AND n.failed_at IS NOT NULL AND n.created_at <= $1
    ORDER BY n.created_at LIMIT 1) f
ORDER BY c.channel`

// FailingChannels lists each channel with an unsent, failed announcement
// created at or before olderThan.
func (s *Store) FailingChannels(ctx context.Context, olderThan time.Time) ([]FailingChannel, error) {
	chs := []string{string(word.ChannelDiscord), string(word.ChannelPush)}
	rows, err := getMany[FailingChannel](ctx, s, failingChannelsSQL, instant(olderThan), chs)
	if err != nil {
		return nil, fmt.Errorf("store: failing announcement channels: %w", err)
	}
	return rows, nil
}
