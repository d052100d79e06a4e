package backup_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/cmd/mangabookmark/backup"
	"github.com/mangabookmark/mangabookmark/internal/citest"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// superDB is a fresh database reached as the test server's superuser,
// dropped when the test ends: what a restore into an embedded cluster
// connects as, and what a dump's COPY ... TO PROGRAM needs.
func superDB(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	admin := storetest.ServerURL(t)
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var super bool
	if err := conn.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super); err != nil || !super {
		citest.Skip(t, "the test server's admin role is not a superuser (%v)", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "mb_restore_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err == nil {
			_, _ = c.Exec(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
			c.Close(context.Background())
		}
	})
	u, _ := url.Parse(admin)
	u.Path = "/" + name
	return u.String()
}

// TestARestoreRunsNothingTheDumpDefines: a backup made by another
// mangabookmark restores as a superuser, leaving no role behind; a dump
// holding a function of its own, called by a CHECK on readers that runs
// COPY ... TO PROGRAM, is refused with a sentence, and nothing of it ran:
// no marker file, no function, no table in the target.
func TestARestoreRunsNothingTheDumpDefines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := superDB(t)
	if err := store.Migrate(src); err != nil {
		t.Fatal(err)
	}
	exec1(t, src, `INSERT INTO readers (discord_id, name, created_at) VALUES ('111', 'ayako', now())`)
	clean := filepath.Join(t.TempDir(), "clean.backup")
	if _, err := backup.Write(ctx, src, t.TempDir(), clean, time.Now()); err != nil {
		t.Fatal(err)
	}
	dst := superDB(t)
	if _, err := backup.Restore(ctx, clean, dst, t.TempDir()); err != nil {
		t.Fatalf("restoring a clean backup as a superuser: %v", err)
	}
	if n := count(t, dst, `SELECT count(*) FROM readers WHERE name = 'ayako'`); n != 1 {
		t.Errorf("the clean restore holds %d of the backed-up Reader, want 1", n)
	}
	if n := count(t, dst, `SELECT count(*) FROM pg_roles WHERE rolname LIKE 'mangabookmark_restore_%'`); n != 0 {
		t.Errorf("the restore left %d roles of its own behind", n)
	}

	markers, err := os.MkdirTemp("", "mb-marker-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(markers)
	_ = os.Chmod(markers, 0o777) // the database server's own user writes the marker
	marker := filepath.Join(markers, "ran")
	exec1(t, src, `CREATE FUNCTION planted() RETURNS boolean LANGUAGE plpgsql AS $$
		BEGIN EXECUTE 'COPY (SELECT 1) TO PROGRAM ''touch `+marker+`'''; RETURN true; END $$`)
	exec1(t, src, `ALTER TABLE readers ADD CONSTRAINT planted CHECK (planted())`)
	hostile := filepath.Join(t.TempDir(), "hostile.backup")
	if _, err := backup.Write(ctx, src, t.TempDir(), hostile, time.Now()); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(marker) // the ALTER above checked the existing row
	target := superDB(t)
	_, err = backup.Restore(ctx, hostile, target, t.TempDir())
	var refused backup.RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "FUNCTION public planted()") {
		t.Errorf("restoring a dump with a function of its own: %v, want a refusal naming it", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the dump's COPY ... TO PROGRAM ran during the restore")
	}
	if n := count(t, target, `SELECT count(*) FROM pg_proc WHERE proname = 'planted'`); n != 0 {
		t.Errorf("the refused restore created the dump's function")
	}
	if n := count(t, target, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`); n != 0 {
		t.Errorf("the refused restore left %d tables in the target, want it empty", n)
	}
}

// TestARestoreRefusesASparseDumpBeforeWritingIt: a tar of a few KB whose
// db.dump claims a GiB (a sparse file) is refused at once, by the entry's
// cap, before any of it is written.
func TestARestoreRefusesASparseDumpBeforeWritingIt(t *testing.T) {
	t.Parallel()
	tarBin, err := exec.LookPath("tar")
	if err != nil {
		citest.Skip(t, "no tar here: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"format":1,"entries":["db.dump"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(mustCreate(t, filepath.Join(dir, "db.dump")), 1<<30); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"gnu", "posix"} {
		file := filepath.Join(t.TempDir(), format+".backup")
		if out, err := exec.Command(tarBin, "--sparse", "--format="+format, "-cf", file, "-C", dir, "manifest.json", "db.dump").CombinedOutput(); err != nil {
			t.Fatalf("tar --sparse: %v: %s", err, out)
		}
		if fi, err := os.Stat(file); err != nil || fi.Size() > 64<<10 {
			t.Fatalf("the sparse tar is %v bytes (%v), want a few KB", fi.Size(), err)
		}
		db := storetest.EmptyURL(t)
		start := time.Now()
		_, err = backup.Restore(context.Background(), file, db, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "db.dump") || !strings.Contains(err.Error(), "so restore will not") {
			t.Errorf("restoring a sparse 1 GiB dump (tar format %s): %v, want a refusal naming db.dump", format, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("the refusal took %v (tar format %s): the dump was written before it was refused", d, format)
		}
	}
}

func mustCreate(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

func exec1(t *testing.T, url, sql string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func count(t *testing.T, url, sql string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}
