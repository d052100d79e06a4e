package backup_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/cmd/mangabookmark/backup"
	"github.com/mangabookmark/mangabookmark/migrations"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// TestAnOlderBackupRestoresThenMigrates: a backup made at migration 5
// restores into an empty database and ends at the newest migration, clean
// (ADR 0023).
func TestAnOlderBackupRestoresThenMigrates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old := storetest.EmptyURL(t)
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, "pgx5://"+strings.TrimPrefix(old, "postgres://"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Steps(5); err != nil {
		t.Fatal(err)
	}
	m.Close()
	file := filepath.Join(t.TempDir(), "old.backup")
	if _, err := backup.Write(ctx, old, t.TempDir(), file, time.Now()); err != nil {
		t.Fatal(err)
	}
	fresh := storetest.EmptyURL(t)
	if _, err := backup.Restore(ctx, file, fresh, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var version int
	var dirty bool
	if err := conn.QueryRow(ctx, `SELECT version, dirty FROM schema_migrations`).Scan(&version, &dirty); err != nil {
		t.Fatal(err)
	}
	ups, _ := fs.Glob(migrations.FS, "*.up.sql")
	newest, _ := strconv.Atoi(strings.SplitN(ups[len(ups)-1], "_", 2)[0])
	if version != newest || dirty {
		t.Errorf("after restoring a backup at migration 5 the database is at %d (dirty %v), want the newest, %d", version, dirty, newest)
	}
}
