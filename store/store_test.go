package store_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

func TestMigrationsGoUpDownAndUpAgain(t *testing.T) {
	t.Parallel()
	url := storetest.EmptyURL(t)
	tables := func() int {
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var n int
		err = conn.QueryRow(context.Background(), `SELECT count(*) FROM information_schema.tables
			WHERE table_schema = 'public' AND table_name IN ('readers','reader_tokens','series','bookmarks',
			'poll_lanes','poll_passes','poll_failures','owner_notices','login_links')`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := store.Migrate(url); err != nil {
		t.Fatalf("up: %v", err)
	}
	if got := tables(); got != 9 {
		t.Fatalf("after up: %d of 9 tables", got)
	}
	if err := store.MigrateDown(url); err != nil {
		t.Fatalf("down: %v", err)
	}
	if got := tables(); got != 0 {
		t.Fatalf("after down: %d tables remain", got)
	}
	if err := store.Migrate(url); err != nil {
		t.Fatalf("up again: %v", err)
	}
	if got := tables(); got != 9 {
		t.Fatalf("after up again: %d of 9 tables", got)
	}
}

func TestALoginLinkWorksOnceAndOnlyBeforeItExpires(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	if err := s.CreateLoginLink(ctx, []byte("h1"), "owner", storetest.Milli(1000), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateLoginLink(ctx, []byte("h2"), "owner", storetest.Milli(1000), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if id, err := s.ConsumeLoginLink(ctx, []byte("h1"), storetest.Milli(999)); err != nil || id != "owner" {
		t.Fatalf("first use: %q %v", id, err)
	}
	if _, err := s.ConsumeLoginLink(ctx, []byte("h1"), storetest.Milli(999)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second use: want ErrNotFound, got %v", err)
	}
	if _, err := s.ConsumeLoginLink(ctx, []byte("h2"), storetest.Milli(1000)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired use: want ErrNotFound, got %v", err)
	}
}

func TestAReaderIsUpsertedOnEverySignIn(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	if err := s.UpsertReader(ctx, store.Reader{DiscordID: "1", Name: "a"}, storetest.Milli(10)); err != nil {
		t.Fatal(err)
	}
	if err := s.UpsertReader(ctx, store.Reader{DiscordID: "1", Name: "b"}, storetest.Milli(20)); err != nil {
		t.Fatal(err)
	}
	r, err := s.GetReader(ctx, "1")
	if err != nil || r.Name != "b" || !r.CreatedAt.Equal(storetest.Milli(10)) || !r.LastSeenAt.Equal(storetest.Milli(20)) {
		t.Fatalf("got %+v %v", r, err)
	}
	if _, err := s.GetReader(ctx, "2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing reader: %v", err)
	}
}

// stmtCounter counts the statements a pool sends.
type stmtCounter struct{ n atomic.Int64 }

func (c *stmtCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *stmtCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func TestDeletingAnOrphanIsOneStatementAndABookmarkRefusesIt(t *testing.T) {
	t.Parallel()
	c := &stmtCounter{}
	s := store.New(storetest.Pool(t, func(cfg *pgxpool.Config) { cfg.ConnConfig.Tracer = c }))
	ctx := context.Background()
	for _, id := range []string{"orphan", "kept"} {
		if err := s.CreateSeries(ctx, store.Series{Site: "novelfull", SeriesID: id, URL: "https://novelfull.com/" + id + ".html", Kind: "novel"}, storetest.Milli(1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.UpsertReader(ctx, store.Reader{DiscordID: "r"}, storetest.Milli(1)); err != nil {
		t.Fatal(err)
	}
	if err := s.AddBookmark(ctx, "r", "novelfull", "kept", storetest.Milli(1)); err != nil {
		t.Fatal(err)
	}
	storetest.Insert(t, s.Pool(), storetest.Failure{Site: word.Novelfull, Series: "orphan", Outcome: word.NotFound, FailingSince: storetest.Milli(5)})
	if err := s.DeleteSeries(ctx, "novelfull", "kept"); !errors.Is(err, store.ErrBookmarked) {
		t.Fatalf("bookmarked delete: want ErrBookmarked, got %v", err)
	}
	if _, err := s.GetSeries(ctx, "novelfull", "kept"); err != nil {
		t.Fatalf("bookmarked series lost: %v", err)
	}
	before := c.n.Load()
	if err := s.DeleteSeries(ctx, "novelfull", "orphan"); err != nil {
		t.Fatal(err)
	}
	if n := c.n.Load() - before; n != 1 {
		t.Errorf("deleting an orphan took %d statements, want 1", n)
	}
	var n int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM poll_failures`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("failure row not cascaded: %d %v", n, err)
	}
}

// The retention delete (ADR 0024) takes the Site's orphans older than the
// cutoff with their per-Series rows, and keeps a young orphan, a Series a
// Bookmark holds, one whose last Bookmark went just now however old the
// Series, and another Site's old orphan.
func TestTheRetentionDeleteTakesOnlyTheSitesOldOrphans(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	now := time.Now()
	for _, id := range []string{"old", "young", "held", "let-go"} {
		if err := s.CreateSeries(ctx, store.Series{Site: "novelfull", SeriesID: id, URL: "https://novelfull.com/" + id + ".html", Kind: "novel"}, now.Add(-200*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateSeries(ctx, store.Series{Site: "asurascans", SeriesID: "elsewhere", URL: "https://asuracomic.net/series/elsewhere", Kind: "manga"}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE series SET orphaned_at = $1`, now.Add(-100*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE series SET orphaned_at = $1 WHERE series_id = 'young'`, now.Add(-24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.UpsertReader(ctx, store.Reader{DiscordID: "r"}, now); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"held", "let-go"} {
		if err := s.AddBookmark(ctx, "r", "novelfull", id, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RemoveBookmark(ctx, "r", "novelfull", "let-go"); err != nil {
		t.Fatal(err)
	}
	storetest.Insert(t, s.Pool(), storetest.Failure{Site: word.Novelfull, Series: "old", Outcome: word.NotFound, FailingSince: now})
	if _, err := s.Pool().Exec(ctx, `INSERT INTO chapter_arrivals (site, series_id, chapter_num, confirmed_at, noticed_at)
		VALUES ('novelfull', 'old', 1, $1, $1)`, now); err != nil {
		t.Fatal(err)
	}

	n, err := s.DeleteOrphans(ctx, "novelfull", now.Add(-90*24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("deleted %d, %v: want the one old orphan", n, err)
	}
	var left []string
	rows, _ := s.Pool().Query(ctx, `SELECT series_id FROM series ORDER BY series_id`)
	left, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || !slices.Equal(left, []string{"elsewhere", "held", "let-go", "young"}) {
		t.Fatalf("left %v, %v", left, err)
	}
	var dependents int
	if err := s.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM poll_failures) + (SELECT count(*) FROM chapter_arrivals)`).Scan(&dependents); err != nil || dependents != 0 {
		t.Fatalf("the old orphan's rows stayed: %d, %v", dependents, err)
	}
}
