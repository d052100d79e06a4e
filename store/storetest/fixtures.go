package storetest

import (
	"cmp"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mangabookmark/mangabookmark/word"
)

// The fixture builders: one typed row per table the tests seed directly,
// written by Insert (or Ensure). Times are time.Time, the zero time for
// "never", as the store's API speaks them; the words are package word's.
// Only this file knows how a row is stored, so a schema change touches the
// fixtures here and nowhere else.

// DB is what the builders write through: a pool, a connection or a
// transaction.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
}

// Row is one fixture row of one table.
type Row interface {
	table() string
	columns() []string
	values() []any
}

// Insert writes rows into their table in one COPY (the table's triggers fire
// as for an INSERT). The test fails on any error.
func Insert[R Row](t testing.TB, db DB, rows ...R) {
	t.Helper()
	if len(rows) == 0 {
		return
	}
	src := make([][]any, len(rows))
	for i, r := range rows {
		src[i] = r.values()
	}
	table := rows[0].table()
	if _, err := db.CopyFrom(context.Background(), pgx.Identifier{table}, rows[0].columns(), pgx.CopyFromRows(src)); err != nil {
		t.Fatalf("storetest: insert %d rows into %s: %v", len(rows), table, err)
	}
}

// Ensure writes each row unless its table already holds one with the same
// key (INSERT ... ON CONFLICT DO NOTHING): for a Reader that a sign-in or an
// earlier seed may have created.
func Ensure[R Row](t testing.TB, db DB, rows ...R) {
	t.Helper()
	for _, r := range rows {
		cols := r.columns()
		marks := make([]string, len(cols))
		for i := range cols {
			marks[i] = "$" + strconv.Itoa(i+1)
		}
		sql := "INSERT INTO " + r.table() + " (" + strings.Join(cols, ", ") + ") VALUES (" +
			strings.Join(marks, ", ") + ") ON CONFLICT DO NOTHING"
		if _, err := db.Exec(context.Background(), sql, r.values()...); err != nil {
			t.Fatalf("storetest: ensure a row of %s: %v", r.table(), err)
		}
	}
}

// Milli is the instant ms milliseconds after the Unix epoch, in UTC, and the
// zero time ("never") for 0: a stored stamp as the store's API speaks it.
func Milli(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// MilliOf is SQL reading a time column as unix milliseconds, 0 for NULL:
// for a test that compares a stored time as a number.
func MilliOf(col string) string {
	return "coalesce((extract(epoch FROM " + col + ") * 1000)::bigint, 0)"
}

// stamp is t as a time column stores it where NULL means never (migration
// 0016): NULL for the zero time, else t to the millisecond, as the store
// writes it.
func stamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.Truncate(time.Millisecond)
}

// instant is t as a column that always holds a time stores it: the zero
// time is the Unix epoch, the 0 such a fixture held before migration 0016.
func instant(t time.Time) time.Time {
	if t.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return t.Truncate(time.Millisecond)
}

// orNull is s, or NULL for "".
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Reader is a readers row.
type Reader struct {
	ID, Name  string
	CreatedAt time.Time
}

func (Reader) table() string     { return "readers" }
func (Reader) columns() []string { return []string{"discord_id", "name", "created_at"} }
func (r Reader) values() []any   { return []any{r.ID, r.Name, instant(r.CreatedAt)} }

func (Series) table() string        { return "series" }
func (Bookmark) table() string      { return "bookmarks" }
func (Failure) table() string       { return "poll_failures" }
func (Pass) table() string          { return "poll_passes" }
func (Notice) table() string        { return "owner_notices" }
func (NoticeAttempt) table() string { return "owner_notice_attempts" }
func (DeadWebhook) table() string   { return "dead_webhooks" }
func (Idempotency) table() string   { return "api_idempotency" }
func (Tally) table() string         { return "site_tallies" }
func (Webhook) table() string       { return "server_webhook" }
func (Arrival) table() string       { return "chapter_arrivals" }

// Series is a series row. Kind is manga unless set; LatestChapter and
// RaisedBy are NULL when "".
type Series struct {
	Site                                            word.Site
	ID, URL, Title, Cover                           string
	Kind                                            word.Kind
	LatestChapter, LatestChapterURL, RaisedBy       string
	CheckedAt, ForcePollAt, FinishedAt, CompletedAt time.Time
	CreatedAt                                       time.Time
	// The scheduler's columns (migration 0017). A Series checked with no
	// NextReadAt gets the check plus an hour, as migration 0017 gives one
	// read before it (every check stamp writes both). Bookmarks is the
	// bookmark_count the bookmarks trigger keeps: set it for a Series whose
	// Bookmarks the test does not insert.
	NextReadAt, SightedAt, ListedAt time.Time
	Bookmarks                       int
	// Polled is the highest number a read of the page showed (migration
	// 0020). Left "", it is LatestChapter when no Reader raised it (a Poll
	// stands behind that number), else NULL.
	Polled string
}

func (Series) columns() []string {
	return []string{"site", "series_id", "url", "title", "cover_url", "kind", "latest_chapter_num",
		"latest_chapter_url", "latest_raised_by", "checked_at", "force_poll_at", "finished_at",
		"site_completed_at", "created_at", "next_read_at", "sighted_at", "listed_at", "bookmark_count", "polled_chapter_num"}
}

func (s Series) values() []any {
	kind := cmp.Or(s.Kind, word.Manga)
	return []any{string(s.Site), s.ID, s.URL, s.Title, s.Cover, string(kind), orNull(s.LatestChapter),
		s.LatestChapterURL, orNull(s.RaisedBy), stamp(s.CheckedAt), stamp(s.ForcePollAt),
		stamp(s.FinishedAt), stamp(s.CompletedAt), instant(s.CreatedAt),
		stamp(s.nextRead()), stamp(s.SightedAt), stamp(s.ListedAt), s.Bookmarks, orNull(s.polled())}
}

func (s Series) polled() string {
	if s.Polled == "" && s.RaisedBy == "" {
		return s.LatestChapter
	}
	return s.Polled
}

func (s Series) nextRead() time.Time {
	if s.NextReadAt.IsZero() && !s.CheckedAt.IsZero() {
		return s.CheckedAt.Add(time.Hour)
	}
	return s.NextReadAt
}

// Bookmark is a bookmarks row; Progress is NULL when "".
type Bookmark struct {
	Reader               string
	Site                 word.Site
	Series, Progress     string
	CreatedAt, UpdatedAt time.Time
}

func (Bookmark) columns() []string {
	return []string{"reader_id", "site", "series_id", "progress_num", "created_at", "updated_at"}
}

func (b Bookmark) values() []any {
	return []any{b.Reader, string(b.Site), b.Series, orNull(b.Progress), instant(b.CreatedAt), instant(b.UpdatedAt)}
}

// Failure is a poll_failures row.
type Failure struct {
	Site         word.Site
	Series       string
	Outcome      word.Outcome
	FailingSince time.Time
}

func (Failure) columns() []string { return []string{"site", "series_id", "outcome", "failing_since"} }

func (f Failure) values() []any {
	return []any{string(f.Site), f.Series, string(f.Outcome), instant(f.FailingSince)}
}

// Pass is a poll_passes row; FinishedAt is StartedAt unless set. The
// listing fields are what its listing walk did (ListingOutcome "" for
// none). Rows go in as the Lanes write them, oldest first: the pass log's
// trigger keeps each Lane's reach from them (migration 0034).
type Pass struct {
	Site                  word.Site
	StartedAt, FinishedAt time.Time
	Due, Checked          int
	Skip                  word.Skip
	word.Counts
	ListingPages, ListingEntries, ListingMarked int
	ListingOutcome                              word.Outcome
}

func (Pass) columns() []string {
	cols := []string{"site", "started_at", "finished_at", "due", "checked", "skip",
		"listing_pages", "listing_entries", "listing_marked", "listing_outcome"}
	for _, o := range word.Outcomes {
		cols = append(cols, o.Column(""))
	}
	return cols
}

func (p Pass) values() []any {
	finished := p.FinishedAt
	if finished.IsZero() {
		finished = p.StartedAt
	}
	v := []any{string(p.Site), instant(p.StartedAt), instant(finished), p.Due, p.Checked, string(p.Skip),
		p.ListingPages, p.ListingEntries, p.ListingMarked, string(p.ListingOutcome)}
	for _, o := range word.Outcomes {
		v = append(v, p.Of(o))
	}
	return v
}

// Notice is an owner_notices row; NotifiedAt is zero while unsent.
type Notice struct {
	Kind       word.NoticeKind
	Site       string
	NotifiedAt time.Time
}

func (Notice) columns() []string { return []string{"kind", "site", "notified_at"} }
func (n Notice) values() []any   { return []any{string(n.Kind), n.Site, stamp(n.NotifiedAt)} }

// NoticeAttempt is an owner_notice_attempts row.
type NoticeAttempt struct {
	Kind          word.NoticeKind
	Site          string
	Attempts      int
	LastAttemptAt time.Time
	LastError     string
}

func (NoticeAttempt) columns() []string {
	return []string{"kind", "site", "attempts", "last_attempt_at", "last_error"}
}

func (a NoticeAttempt) values() []any {
	return []any{string(a.Kind), a.Site, a.Attempts, instant(a.LastAttemptAt), a.LastError}
}

// DeadWebhook is a dead_webhooks row: the hex SHA-256 of the address.
type DeadWebhook struct {
	Hash   string
	DeadAt time.Time
}

func (DeadWebhook) columns() []string { return []string{"url_hash", "dead_at"} }
func (d DeadWebhook) values() []any   { return []any{d.Hash, instant(d.DeadAt)} }

// Idempotency is an api_idempotency row; Status 0 is a key whose first
// request is still running.
type Idempotency struct {
	Reader, Key string
	RequestHash []byte
	Status      int
	CreatedAt   time.Time
}

func (Idempotency) columns() []string {
	return []string{"reader_id", "key", "request_hash", "status", "created_at"}
}

func (i Idempotency) values() []any {
	return []any{i.Reader, i.Key, i.RequestHash, i.Status, instant(i.CreatedAt)}
}

// Tally is a site_tallies row (written directly only to corrupt it).
type Tally struct {
	Site                word.Site
	Pollable, NoChapter int64
}

func (Tally) columns() []string { return []string{"site", "pollable", "no_chapter"} }
func (t Tally) values() []any   { return []any{string(t.Site), t.Pollable, t.NoChapter} }

// Webhook is the server_webhook row.
type Webhook struct {
	Configured bool
	RecordedAt time.Time
}

func (Webhook) columns() []string { return []string{"configured", "recorded_at"} }
func (w Webhook) values() []any   { return []any{w.Configured, instant(w.RecordedAt)} }

// Arrival is a chapter_arrivals row: a new chapter a Poll confirmed at
// ConfirmedAt, first evidenced at NoticedAt (ConfirmedAt unless set).
type Arrival struct {
	Site                   word.Site
	Series, Chapter, URL   string
	ConfirmedAt, NoticedAt time.Time
	Listed                 bool
}

func (Arrival) columns() []string {
	return []string{"site", "series_id", "chapter_num", "chapter_url", "confirmed_at", "noticed_at", "listed"}
}

func (a Arrival) values() []any {
	noticed := a.NoticedAt
	if noticed.IsZero() {
		noticed = a.ConfirmedAt
	}
	return []any{string(a.Site), a.Series, cmp.Or(a.Chapter, "1"), a.URL, instant(a.ConfirmedAt), instant(noticed), a.Listed}
}

// FailingCount is a failing_history row: a Site's failing figure for the
// hour starting At (migration 0024).
type FailingCount struct {
	Site    word.Site
	At      time.Time
	Failing int
}

func (FailingCount) table() string     { return "failing_history" }
func (FailingCount) columns() []string { return []string{"site", "at", "failing"} }
func (f FailingCount) values() []any   { return []any{string(f.Site), instant(f.At), f.Failing} }

// Listing is a Lane's listing state on its poll_lanes row (migration 0034;
// the zero time for NULL): its last attempt, and the read, named and empty
// times of ADR 0016. SetListing writes it.
type Listing struct {
	Site         word.Site
	TriedAt      time.Time
	Outcome      word.Outcome
	Entries      int
	Marked       int
	FailingSince time.Time
	ReadAt       time.Time
	EmptySince   time.Time
}

// SetListing writes each Lane's listing state onto its row (the Lanes'
// rows exist from the first migration, so it updates rather than inserts).
func SetListing(t testing.TB, db DB, rows ...Listing) {
	t.Helper()
	for _, l := range rows {
		tag, err := db.Exec(context.Background(), `UPDATE poll_lanes SET listing_tried_at = $2, listing_outcome = $3,
			listing_entries = $4, listing_marked = $5, listing_failing_since = $6, listing_read_at = $7,
			listing_empty_since = $8 WHERE site = $1`, string(l.Site), stamp(l.TriedAt), string(l.Outcome),
			l.Entries, l.Marked, stamp(l.FailingSince), stamp(l.ReadAt), stamp(l.EmptySince))
		if err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("storetest: set listing of %s: %v (%d rows)", l.Site, err, tag.RowsAffected())
		}
	}
}
