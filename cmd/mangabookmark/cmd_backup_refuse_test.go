package main

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/internal/citest"
	"github.com/mangabookmark/mangabookmark/store/localpg"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// TestRestoreRefusesABadKeyBeforeWritingAnything: a backup whose
// token.key or session.key is a symlink, a hard link, a FIFO, or 0 to 3
// bytes long is refused with one sentence naming the key, and neither
// DATA_DIR nor the database gains anything.
func TestRestoreRefusesABadKeyBeforeWritingAnything(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srcURL, srcDir := storetest.URL(t), t.TempDir()
	seedServer(t, ctx, srcURL, srcDir)
	good := filepath.Join(t.TempDir(), "mb.backup")
	srcEnv := map[string]string{"DATABASE_URL": srcURL, "DATA_DIR": srcDir}
	if err := run(ctx, []string{"mangabookmark", "backup", good}, func(k string) string { return srcEnv[k] }, strings.NewReader(""), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	bad := map[string]*tar.Header{
		"a symlink":   {Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
		"a hard link": {Typeflag: tar.TypeLink, Linkname: "manifest.json"},
		"a FIFO":      {Typeflag: tar.TypeFifo},
		"0 bytes":     {Typeflag: tar.TypeReg},
		"1 byte":      {Typeflag: tar.TypeReg, Size: 1},
		"3 bytes":     {Typeflag: tar.TypeReg, Size: 3},
	}
	for kind, h := range bad {
		for _, key := range []string{"token.key", "session.key"} {
			file := withKey(t, good, "keys/"+key, h)
			dbURL, dataDir := storetest.EmptyURL(t), filepath.Join(t.TempDir(), "data")
			env := map[string]string{"DATABASE_URL": dbURL, "DATA_DIR": dataDir}
			err := run(ctx, []string{"mangabookmark", "restore", file}, func(k string) string { return env[k] }, strings.NewReader(""), io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), key) || strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("restoring %s as %s: %v, want one sentence naming it", key, kind, err)
			}
			if _, err := os.Lstat(dataDir); err == nil {
				t.Errorf("restoring %s as %s created DATA_DIR", key, kind)
			}
			if n := tables(t, dbURL); n != 0 {
				t.Errorf("restoring %s as %s wrote %d tables", key, kind, n)
			}
		}
	}
}

// withKey is the backup good with the entry name replaced by h (its body
// that many 'k's).
func withKey(t *testing.T, good, name string, h *tar.Header) string {
	t.Helper()
	in, err := os.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out bytes.Buffer
	tr, tw := tar.NewReader(in), tar.NewWriter(&out)
	for {
		old, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if old.Name == name {
			nh := *h
			nh.Name, nh.Mode = name, 0o600
			if err := tw.WriteHeader(&nh); err != nil {
				t.Fatal(err)
			}
			_, _ = tw.Write(bytes.Repeat([]byte("k"), int(nh.Size)))
			continue
		}
		if err := tw.WriteHeader(old); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "bad.backup")
	if err := os.WriteFile(file, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func tables(t *testing.T, url string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRestoreOfAMissingFileStartsNoCluster: with the embedded database,
// restoring a file that does not exist is refused before a cluster is made
// in DATA_DIR.
func TestRestoreOfAMissingFileStartsNoCluster(t *testing.T) {
	if _, err := localpg.FindBinaries(); err != nil {
		citest.Skip(t, "no PostgreSQL binaries here: %v", err)
	}
	dataDir := filepath.Join(storetest.ClusterDir(t, "mb-restore-"), "data")
	env := map[string]string{"DATA_DIR": dataDir}
	err := run(context.Background(), []string{"mangabookmark", "restore", filepath.Join(t.TempDir(), "missing.backup")}, func(k string) string { return env[k] }, strings.NewReader(""), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "missing.backup") {
		t.Errorf("restoring a missing file: %v, want a refusal naming it", err)
	}
	if _, err := os.Lstat(dataDir); err == nil {
		t.Errorf("restoring a missing file created %s (a cluster)", dataDir)
	}
}

// TestBackupNeverWritesThroughAPlantedNameNorOverwrites: FILE.tmp planted
// as a symlink to a world-readable file is never written through; a second
// backup to the same FILE is refused with a sentence naming --force and
// leaves it as it was; with --force it replaces it, 0600.
func TestBackupNeverWritesThroughAPlantedNameNorOverwrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, dataDir, dir := storetest.URL(t), t.TempDir(), t.TempDir()
	seedServer(t, ctx, url, dataDir)
	file, victim := filepath.Join(dir, "mb.backup"), filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("not yours\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, file+".tmp"); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": url, "DATA_DIR": dataDir}
	backupTo := func(args ...string) error {
		return run(ctx, append([]string{"mangabookmark", "backup"}, args...), func(k string) string { return env[k] }, strings.NewReader(""), io.Discard, io.Discard)
	}
	if err := backupTo(file); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "not yours\n" {
		t.Errorf("the backup wrote through the planted %s.tmp into %s: it now holds %d bytes", file, victim, len(b))
	}
	first, _ := os.ReadFile(file)
	err := backupTo(file)
	if err == nil || !strings.Contains(err.Error(), "already exists") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("a backup over an existing FILE: %v, want a refusal naming --force", err)
	}
	if b, _ := os.ReadFile(file); !bytes.Equal(b, first) {
		t.Errorf("the refused backup changed %s", file)
	}
	if err := backupTo("--force", file); err != nil {
		t.Fatalf("backup --force over an existing FILE: %v", err)
	}
	if b, _ := os.ReadFile(file); bytes.Equal(b, first) || !bytes.HasPrefix(b[257:], []byte("ustar")) {
		t.Errorf("backup --force did not replace %s with a new backup", file)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the replaced backup: %v, want mode 0600", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp"))
	if len(left) != 0 {
		t.Errorf("the backups left %v behind", left)
	}
}
