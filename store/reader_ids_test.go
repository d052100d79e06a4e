package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// A database from before migration 0031 keeps working: every Reader keeps
// their session epoch (so their cookies still sign them in), a local
// Reader's name keeps its key (their id, which was the name's digest), and
// a Discord Reader has none. A row made afterwards starts at a random epoch.
func TestMigration0031KeepsEveryEpochAndKeysTheLocalNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URLAtVersion(t, 30)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO readers (discord_id, name, created_at, session_epoch) VALUES
		('local-0123456789abcdef', 'Ada', now(), 3), ('80351110224678912', 'Nelly', now(), 0)`); err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(url); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := conn.QueryRow(ctx, `SELECT string_agg(discord_id || '=' || session_epoch || '/' || coalesce(name_key, 'none'), ',' ORDER BY discord_id) FROM readers`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := "80351110224678912=0/none,local-0123456789abcdef=3/local-0123456789abcdef"; got != want {
		t.Errorf("after the migration: %s, want %s", got, want)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s := store.New(pool)
	if e, err := s.SessionEpoch(ctx, "local-0123456789abcdef"); err != nil || e != 3 {
		t.Errorf("Ada's epoch after the migration: %d %v", e, err)
	}
	if err := s.UpsertReader(ctx, store.Reader{DiscordID: "1", Name: "New"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e, err := s.SessionEpoch(ctx, "1"); err != nil || e < 1<<32 {
		t.Errorf("a new row's epoch: %d %v, want a random one above 2^32", e, err)
	}
}

// A Reader removed and made again under the same id (a Discord Reader who
// signs in again) never starts at an epoch an earlier row's cookie carries.
func TestARowMadeAgainUnderAnIdNeverRepeatsItsSessionEpoch(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	seen := map[int64]bool{}
	for i := range 20 {
		if err := s.UpsertReader(ctx, store.Reader{DiscordID: "42", Name: "Nelly"}, addNow); err != nil {
			t.Fatal(err)
		}
		if err := s.EndSessions(ctx, "42"); err != nil {
			t.Fatal(err)
		}
		e, err := s.SessionEpoch(ctx, "42")
		if err != nil {
			t.Fatal(err)
		}
		if seen[e] || seen[e-1] || e <= 1 {
			t.Fatalf("row %d starts at epoch %d, which a cookie of an earlier row carried", i+1, e-1)
		}
		seen[e-1], seen[e] = true, true
		if err := s.RemoveReader(ctx, "42"); err != nil {
			t.Fatal(err)
		}
	}
}
