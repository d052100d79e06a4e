package main

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/server"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// TestBackupRestoresIntoAFreshServer backs up a seeded server (rows and the
// keys in DATA_DIR), restores into an empty database and an empty DATA_DIR,
// and asks both the same API questions with a token issued before the
// backup: the restored token.key still recognises it, and the answers are
// the same. Restoring over the now non-empty database, or into a DATA_DIR
// holding another key, is refused with a sentence (issue 24, item 8).
func TestBackupRestoresIntoAFreshServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srcURL, srcDir := storetest.URL(t), t.TempDir()
	token := seedServer(t, ctx, srcURL, srcDir)
	file := filepath.Join(t.TempDir(), "mb.backup")

	var out bytes.Buffer
	srcEnv := map[string]string{"DATABASE_URL": srcURL, "DATA_DIR": srcDir}
	if err := run(ctx, []string{"mangabookmark", "backup", file}, func(k string) string { return srcEnv[k] }, strings.NewReader(""), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	checkBackupFile(t, file, srcDir, out.String())

	dstURL, dstDir := storetest.EmptyURL(t), filepath.Join(t.TempDir(), "data")
	dstEnv := map[string]string{"DATABASE_URL": dstURL, "DATA_DIR": dstDir}
	restore := func(env map[string]string) error {
		return run(ctx, []string{"mangabookmark", "restore", file}, func(k string) string { return env[k] }, strings.NewReader(""), io.Discard, io.Discard)
	}
	if err := restore(dstEnv); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"token.key", "session.key", "vapid.json"} {
		want, _ := os.ReadFile(filepath.Join(srcDir, k))
		got, err := os.ReadFile(filepath.Join(dstDir, k))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("restored %s differs from the backed-up one (err %v)", k, err)
		}
		if fi, err := os.Stat(filepath.Join(dstDir, k)); err == nil && fi.Mode().Perm() != 0o600 {
			t.Errorf("restored %s has mode %v, want 0600", k, fi.Mode().Perm())
		}
	}
	for _, path := range []string{"/api/v1/me", "/api/v1/bookmarks"} {
		src, dst := apiAnswer(t, srcURL, srcDir, token, path), apiAnswer(t, dstURL, dstDir, token, path)
		if src != dst || !strings.Contains(dst, "Backed Up Title") && path == "/api/v1/bookmarks" {
			t.Errorf("GET %s answers differently after the restore:\nsource:   %s\nrestored: %s", path, src, dst)
		}
	}

	err := restore(dstEnv)
	if err == nil || !strings.Contains(err.Error(), "already holds") || !strings.Contains(err.Error(), "restore into a new, empty database") {
		t.Errorf("restoring over a restored database: %v, want the refusal", err)
	}
	otherDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(otherDir, "token.key"), []byte(strings.Repeat("9", 64)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = restore(map[string]string{"DATABASE_URL": storetest.EmptyURL(t), "DATA_DIR": otherDir})
	if err == nil || !strings.Contains(err.Error(), "already holds a different token.key") {
		t.Errorf("restoring into a DATA_DIR with another token.key: %v, want the refusal", err)
	}
}

// seedServer writes a Reader, a Series, a Bookmark and the keys a started
// server would have (a running server's own, when it has started on dir),
// and returns a userscript token issued under token.key.
func seedServer(t *testing.T, ctx context.Context, url, dir string) string {
	t.Helper()
	st, err := store.Open(ctx, url, store.Pools{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pool := st.Pool()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	storetest.Insert(t, pool, storetest.Reader{ID: "111", Name: "ayako", CreatedAt: t0})
	storetest.Insert(t, pool, storetest.Series{Site: word.Asurascans, ID: "kept", URL: "https://asurascans.com/comics/kept",
		Title: "Backed Up Title", Kind: word.Asurascans.Kind(), LatestChapter: "12", CheckedAt: t0, CreatedAt: t0,
		NextReadAt: t0.AddDate(100, 0, 0)}) // not due: a server started on these rows reads no real Site
	storetest.Insert(t, pool, storetest.Bookmark{Reader: "111", Site: word.Asurascans, Series: "kept", Progress: "7"})
	if _, err := server.KeyFor(word.Secret(""), dir, "session.key"); err != nil {
		t.Fatal(err)
	}
	tokenKey, err := server.KeyFor(word.Secret(""), dir, "token.key")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.VAPIDKeysFor(dir); err != nil {
		t.Fatal(err)
	}
	token, hash := handlers.NewAPIToken(tokenKey)
	if _, err := st.CreateToken(ctx, "111", hash, "phone", t0); err != nil {
		t.Fatal(err)
	}
	return token
}

// checkBackupFile: 0600, the manifest, the dump and the three keys, and no
// key printed.
func checkBackupFile(t *testing.T, file, dataDir, printed string) {
	t.Helper()
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the backup has mode %v, want 0600: it holds the keys", fi.Mode().Perm())
	}
	if _, err := os.Stat(file + ".tmp"); err == nil {
		t.Errorf("the backup left %s.tmp behind", file)
	}
	f, _ := os.Open(file)
	defer f.Close()
	var names []string
	tr := tar.NewReader(f)
	for h, err := tr.Next(); err == nil; h, err = tr.Next() {
		names = append(names, h.Name)
	}
	if got, want := strings.Join(names, " "), "manifest.json db.dump keys/token.key keys/session.key keys/vapid.json"; got != want {
		t.Errorf("the backup holds %q, want %q", got, want)
	}
	key, _ := os.ReadFile(filepath.Join(dataDir, "token.key"))
	if len(key) < 32 || strings.Contains(printed, strings.TrimSpace(string(key))) {
		t.Errorf("the backup command printed the token key (or there was none): %q", printed)
	}
}

// apiAnswer is the body GET path answers on a server over url with the
// keys in dir, for the bearer token; a 200 is required.
func apiAnswer(t *testing.T, url, dir, token, path string) string {
	t.Helper()
	st, err := store.Open(context.Background(), url, store.Pools{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tokenKey, _ := os.ReadFile(filepath.Join(dir, "token.key"))
	h := handlers.NewServer(handlers.Deps{Store: st, Logger: slog.New(slog.DiscardHandler), PublicBaseURL: "http://mb.test",
		OwnerID: "111", SessionKey: []byte("0123456789abcdef0123456789abcdef-test-key"), TokenKey: bytes.TrimSpace(tokenKey)})
	req := httptest.NewRequest(http.MethodGet, "http://mb.test"+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s with the token issued before the backup answered %d: %s", path, rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// TestBackupNamesTheKeysTheEnvironmentHolds: a key set in the environment
// is not in DATA_DIR, so not in the file; backup says so by name and never
// prints the value (README Back up).
func TestBackupNamesTheKeysTheEnvironmentHolds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, dir := storetest.URL(t), t.TempDir()
	secret := strings.Repeat("k", 40)
	env := map[string]string{"DATABASE_URL": url, "DATA_DIR": dir, "TOKEN_KEY": secret}
	var out bytes.Buffer
	file := filepath.Join(t.TempDir(), "mb.backup")
	if err := run(ctx, []string{"mangabookmark", "backup", file}, func(k string) string { return env[k] }, strings.NewReader(""), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	printed := out.String()
	if !strings.Contains(printed, "TOKEN_KEY is set in the environment, so it is not in the file") {
		t.Errorf("backup with TOKEN_KEY in the environment printed %q, want a line naming it", printed)
	}
	if strings.Contains(printed, "SESSION_KEY") || strings.Contains(printed, secret) {
		t.Errorf("backup printed a key it was not given, or a key's value: %q", printed)
	}
}
