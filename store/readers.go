package store

import (
	"context"
	"fmt"
	"time"
)

// Reader is one member of the group who has signed in.
type Reader struct {
	DiscordID  string    `db:"discord_id"`
	Name       string    `db:"name"`
	AvatarURL  string    `db:"avatar_url"`
	CreatedAt  time.Time `db:"created_at"`
	LastSeenAt time.Time `db:"last_seen_at"`
}

const upsertReaderSQL = `
INSERT INTO readers (discord_id, name, avatar_url, created_at, last_seen_at)
VALUES ($1, $2, $3, $4, $4)
ON CONFLICT (discord_id) DO UPDATE
   SET name = excluded.name, avatar_url = excluded.avatar_url, last_seen_at = excluded.last_seen_at`

// UpsertReader records a sign-in.
func (s *Store) UpsertReader(ctx context.Context, r Reader, now time.Time) error {
	if _, err := s.pool.Exec(ctx, upsertReaderSQL, r.DiscordID, r.Name, r.AvatarURL, instant(now)); err != nil {
		return fmt.Errorf("store: upsert reader %s: %w", r.DiscordID, translate(err))
	}
	return nil
}

const getReaderSQL = `SELECT discord_id, name, avatar_url, created_at, last_seen_at FROM readers WHERE discord_id = $1`

// GetReader returns one Reader or ErrNotFound.
func (s *Store) GetReader(ctx context.Context, discordID string) (Reader, error) {
	r, err := getOne[Reader](ctx, s, getReaderSQL, discordID)
	if err != nil {
		return Reader{}, fmt.Errorf("store: get reader %s: %w", discordID, err)
	}
	return r, nil
}

const sessionEpochSQL = `SELECT session_epoch FROM readers WHERE discord_id = $1`

// SessionEpoch is the epoch a Reader's valid session cookies carry
// (ErrNotFound for an unknown Reader).
func (s *Store) SessionEpoch(ctx context.Context, discordID string) (int64, error) {
	var e int64
	if err := s.pool.QueryRow(ctx, sessionEpochSQL, discordID).Scan(&e); err != nil {
		return 0, fmt.Errorf("store: session epoch %s: %w", discordID, translate(err))
	}
	return e, nil
}

const endSessionsSQL = `UPDATE readers SET session_epoch = session_epoch + 1 WHERE discord_id = $1`

// EndSessions makes every session cookie of the Reader invalid.
func (s *Store) EndSessions(ctx context.Context, discordID string) error {
	if _, err := s.pool.Exec(ctx, endSessionsSQL, discordID); err != nil {
		return fmt.Errorf("store: end sessions %s: %w", discordID, translate(err))
	}
	return nil
}

const endSessionsUngrantedSQL = `UPDATE readers SET session_epoch = session_epoch + 1, guild_check_due_at = NULL WHERE discord_id = $1`

// EndSessionsUngranted ends the sessions of a Discord Reader whose guild
// could not be asked again because no refresh token was kept (they signed in
// before one was): no check is due until their next Discord sign-in keeps one.
func (s *Store) EndSessionsUngranted(ctx context.Context, discordID string) error {
	if _, err := s.pool.Exec(ctx, endSessionsUngrantedSQL, discordID); err != nil {
		return fmt.Errorf("store: end sessions %s: %w", discordID, translate(err))
	}
	return nil
}

// signOutEverywhereSQL ends the sessions, deletes the API tokens and forgets
// the Discord grant, in one statement: nothing the Reader held still works.
const signOutEverywhereSQL = `
WITH tokens AS (DELETE FROM reader_tokens WHERE reader_id = $1)
UPDATE readers SET session_epoch = session_epoch + 1, discord_refresh = NULL, guild_check_due_at = NULL
 WHERE discord_id = $1`

// SignOutEverywhere ends every session of the Reader and revokes every API
// token they hold (the owner's "Sign out everywhere", and a Reader who left
// the guild). ErrNotFound: no such Reader.
func (s *Store) SignOutEverywhere(ctx context.Context, discordID string) error {
	tag, err := s.pool.Exec(ctx, signOutEverywhereSQL, discordID)
	if err != nil {
		return fmt.Errorf("store: sign out everywhere %s: %w", discordID, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: sign out everywhere %s: %w", discordID, ErrNotFound)
	}
	return nil
}

// removeReaderSQL deletes the Reader: their tokens, Bookmarks, settings,
// push subscriptions and announcements go by their foreign keys (ON DELETE
// CASCADE), a Latest Chapter they raised loses its attribution (SET NULL),
// and their unused sign-in links, which name them without a foreign key,
// go here. A removed Reader's cookie names no row, so it signs nobody in;
// a row made later under the same id (a Discord Reader signing in again)
// starts at a random session epoch (ADR 0030), so the cookie stays dead.
const removeReaderSQL = `
WITH links AS (DELETE FROM login_links WHERE discord_id = $1)
DELETE FROM readers WHERE discord_id = $1`

// RemoveReader deletes a Reader and everything that is theirs.
// ErrNotFound: no such Reader.
func (s *Store) RemoveReader(ctx context.Context, discordID string) error {
	tag, err := s.pool.Exec(ctx, removeReaderSQL, discordID)
	if err != nil {
		return fmt.Errorf("store: remove reader %s: %w", discordID, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: remove reader %s: %w", discordID, ErrNotFound)
	}
	return nil
}

const countBookmarksSQL = `SELECT count(*) FROM bookmarks WHERE reader_id = $1`

// CountBookmarks is how many Bookmarks a Reader holds (the removal's
// confirm step says it, and the list drawn after an import).
func (s *Store) CountBookmarks(ctx context.Context, discordID string) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, countBookmarksSQL, discordID).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count bookmarks %s: %w", discordID, translate(err))
	}
	return n, nil
}

const listReadersSQL = `SELECT discord_id, name, avatar_url, created_at, last_seen_at FROM readers ORDER BY last_seen_at DESC NULLS LAST, discord_id`

// ListReaders returns every Reader, the most recently seen first. The group
// is small (one Discord guild), so the list is whole.
func (s *Store) ListReaders(ctx context.Context) ([]Reader, error) {
	v, err := getMany[Reader](ctx, s, listReadersSQL)
	if err != nil {
		return nil, fmt.Errorf("store: list readers: %w", err)
	}
	return v, nil
}

// seenSessionSQL reads the session epoch and stamps last_seen_at at most
// once an hour, in one statement (as readerByTokenSQL stamps a token): a
// page view costs no extra write within the hour. The SELECT sees the row
// as it was before the stamp, which changes no epoch. It also says whether
// the Reader's guild re-check is due (CONTEXT.md, Guild re-check), so the
// daily check costs no read of its own.
const seenSessionSQL = `
WITH stamp AS (
    UPDATE readers SET last_seen_at = $2::timestamptz
     WHERE discord_id = $1 AND ` + seenDue + `
)
SELECT session_epoch, coalesce(guild_check_due_at <= $2::timestamptz, false) FROM readers WHERE discord_id = $1`

// seenDue is when a request stamps readers.last_seen_at ($2 the request's
// time): never stamped, stamped over an hour ago, or stamped ahead of this
// clock (a clock that moved back, as the demo's does when it starts again
// on the same database), which would otherwise never be stamped again.
const seenDue = `NOT coalesce(last_seen_at BETWEEN $2::timestamptz - interval '1 hour' AND $2::timestamptz, false)`

// Session is what a request learns of its Reader's sessions.
type Session struct {
	Epoch int64
	// GuildCheckDue: the Reader's guild membership is due to be asked again.
	GuildCheckDue bool
}

// SeenSession is SessionEpoch for a request: it also records that the
// Reader was seen (to the hour). ErrNotFound for an unknown Reader.
func (s *Store) SeenSession(ctx context.Context, discordID string, now time.Time) (Session, error) {
	var v Session
	if err := s.pool.QueryRow(ctx, seenSessionSQL, discordID, instant(now)).Scan(&v.Epoch, &v.GuildCheckDue); err != nil {
		return Session{}, fmt.Errorf("store: session epoch %s: %w", discordID, translate(err))
	}
	return v, nil
}

const nameReaderSQL = `
INSERT INTO readers (discord_id, name_key, name, created_at) VALUES ($1, $2, $3, $4)
ON CONFLICT DO NOTHING`

// NameReader records a Reader the owner named before they ever signed in
// (a one-time link for someone without Discord). Never seen until they
// use it. nameKey tells names apart (a local Reader's name without regard
// to case); the id is new and random (ADR 0030). ErrConflict: the name is
// taken, so two people never become one account by sharing a name.
func (s *Store) NameReader(ctx context.Context, discordID, nameKey, name string, now time.Time) error {
	tag, err := s.pool.Exec(ctx, nameReaderSQL, discordID, nameKey, name, instant(now))
	if err != nil {
		return fmt.Errorf("store: name reader %s: %w", discordID, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: name reader %s: %w", discordID, ErrConflict)
	}
	return nil
}

const saveDiscordGrantSQL = `UPDATE readers SET discord_refresh = $2, guild_check_due_at = $3 WHERE discord_id = $1`

// SaveDiscordGrant keeps a Discord Reader's sealed OAuth refresh token and
// when their guild membership is next to be asked (CONTEXT.md, Guild
// re-check). The store never sees the token itself.
func (s *Store) SaveDiscordGrant(ctx context.Context, discordID string, sealed []byte, due time.Time) error {
	if _, err := s.pool.Exec(ctx, saveDiscordGrantSQL, discordID, sealed, instant(due)); err != nil {
		return fmt.Errorf("store: save discord grant %s: %w", discordID, translate(err))
	}
	return nil
}

// claimGuildCheckSQL takes the Reader's due check for one request: it moves
// the due time to the retry time first, so a second request (or replica)
// never spends the same refresh token, which Discord rotates on use, and a
// Discord outage is asked again at the retry time, not on every request.
const claimGuildCheckSQL = `
UPDATE readers SET guild_check_due_at = $3
 WHERE discord_id = $1 AND guild_check_due_at <= $2
RETURNING coalesce(discord_refresh, ''::bytea)`

// ClaimGuildCheck claims a due guild re-check and returns the sealed refresh
// token (empty: none was kept). ErrNotFound: no check is due, or another
// request claimed it.
func (s *Store) ClaimGuildCheck(ctx context.Context, discordID string, now, retry time.Time) ([]byte, error) {
	var sealed []byte
	if err := s.pool.QueryRow(ctx, claimGuildCheckSQL, discordID, instant(now), instant(retry)).Scan(&sealed); err != nil {
		return nil, fmt.Errorf("store: claim guild check %s: %w", discordID, translate(err))
	}
	return sealed, nil
}
