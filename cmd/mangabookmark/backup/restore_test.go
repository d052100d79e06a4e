package backup

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzReadTar: a file handed to restore is outside input. Whatever it
// holds, reading it returns a manifest of the current format with the dump,
// or an error; it never panics and never takes a key it does not know.
func FuzzReadTar(f *testing.F) {
	var ok bytes.Buffer
	tw := tar.NewWriter(&ok)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_ = addBytes(tw, manifestName, []byte(`{"format":1,"entries":["db.dump"]}`), at)
	_ = addBytes(tw, dumpName, []byte("PGDMP"), at)
	_ = addBytes(tw, keysDir+"token.key", []byte(strings.Repeat("a", 64)), at)
	_ = addBytes(tw, keysDir+"../evil", []byte("x"), at)
	_ = tw.Close()
	f.Add(ok.Bytes())
	f.Add([]byte("not a tar"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		file := filepath.Join(dir, "in")
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		m, keys, err := readTar(file, filepath.Join(dir, "db.dump"))
		if err != nil {
			return
		}
		if m.Format != FormatVersion {
			t.Errorf("accepted format %d", m.Format)
		}
		for k := range keys {
			if !strings.Contains(strings.Join(KeyFiles, " "), k) || strings.Contains(k, "/") {
				t.Errorf("took key %q", k)
			}
		}
	})
}

// TestReadTarTakesOnlyKnownKeys: the seed above reads, with token.key and
// without the entry that names a path outside keys/.
func TestReadTarTakesOnlyKnownKeys(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	at := time.Now()
	_ = addBytes(tw, manifestName, []byte(`{"format":1}`), at)
	_ = addBytes(tw, dumpName, []byte("PGDMP"), at)
	_ = addBytes(tw, keysDir+"token.key", []byte(strings.Repeat("k", 32)), at)
	_ = addBytes(tw, keysDir+"../evil", []byte("x"), at)
	_ = tw.Close()
	file := filepath.Join(dir, "in")
	_ = os.WriteFile(file, buf.Bytes(), 0o600)
	_, keys, err := readTar(file, filepath.Join(dir, "db.dump"))
	if err != nil || len(keys) != 1 || string(keys["token.key"]) != strings.Repeat("k", 32) {
		t.Errorf("readTar = %v, %v; want token.key alone", keys, err)
	}
	if _, _, err := readTar(file+"x", filepath.Join(dir, "d")); err == nil {
		t.Error("a missing file read without error")
	}
	_ = os.WriteFile(file, []byte("junk"), 0o600)
	if _, _, err := readTar(file, filepath.Join(dir, "d")); err == nil || !strings.Contains(err.Error(), "is not a mangabookmark backup") {
		t.Errorf("junk: %v, want the sentence", err)
	}
}
