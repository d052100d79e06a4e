package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// A database from before migration 0019 keeps working: a local Reader and
// their unused sign-in link are untouched and never due for a guild
// re-check; a Discord Reader (a snowflake id) is due at once, having no
// refresh token kept (CONTEXT.md, Guild re-check).
func TestMigration0019KeepsLocalReadersAndMakesDiscordReadersDue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.URLAtVersion(t, 18)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO readers (discord_id, name, created_at) VALUES
		('local-0123456789abcdef', 'Ada', now()), ('local-owner', 'Owner', now()), ('80351110224678912', 'Nelly', now());
		INSERT INTO login_links (token_hash, discord_id, expires_at) VALUES ('\x0a', 'local-0123456789abcdef', now() + interval '1 day')`); err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(url); err != nil {
		t.Fatal(err)
	}
	var due string
	if err := conn.QueryRow(ctx, `SELECT string_agg(discord_id, ',' ORDER BY discord_id) FROM readers WHERE guild_check_due_at IS NOT NULL`).Scan(&due); err != nil {
		t.Fatal(err)
	}
	if due != "80351110224678912" {
		t.Errorf("due after the migration: %q", due)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	id, err := store.New(pool).ConsumeLoginLink(ctx, []byte("\n"), time.Now())
	if err != nil || id != "local-0123456789abcdef" {
		t.Errorf("the local Reader's link after the migration: %q %v", id, err)
	}
	if err := store.New(pool).NameReader(ctx, "local-0123456789abcdef", "local-fedcba9876543210", "ADA", time.Now()); !errors.Is(err, store.ErrConflict) {
		t.Errorf("naming a taken local id again: %v, want ErrConflict", err)
	}
	// Since migration 0031 a name is told apart by its key, which for a
	// local Reader from before is their id: a new id does not free the name.
	if err := store.New(pool).NameReader(ctx, "local-fedcba9876543210", "local-0123456789abcdef", "ADA", time.Now()); !errors.Is(err, store.ErrConflict) {
		t.Errorf("naming a taken local name again under a new id: %v, want ErrConflict", err)
	}
}
