package backup

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
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

// TestReadStatementsRunsOnlyOurCopyAndSetval: what pg_restore prints of a
// dump is read, never run. A COPY of a table's rows and a setval are
// handed on (a row longer than the read buffer whole, a `\.` inside a row
// not taken for its end); any other statement, as a TABLE DATA entry's own
// `COPY ... TO PROGRAM` would print, is refused.
func TestReadStatementsRunsOnlyOurCopyAndSetval(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	text := "--\n\\restrict abc\nSET client_encoding = 'UTF8';\nSELECT pg_catalog.set_config('search_path', '', false);\n" +
		"COPY public.readers (discord_id, \"name\") FROM stdin;\n1\t" + long + "\n2\t\\\\.\n\\.\n\n" +
		"SELECT pg_catalog.setval('public.reader_tokens_id_seq', 42, true);\n\\unrestrict abc\n"
	var got []string
	err := readStatements(bufio.NewReaderSize(strings.NewReader(text), 64<<10), func(table string, cols []string, rows io.Reader) error {
		b, err := io.ReadAll(rows)
		got = append(got, table+" "+strings.Join(cols, ",")+" "+strconv.Itoa(len(b)))
		return err
	}, func(seq string, v int64, called bool) error {
		got = append(got, fmt.Sprint(seq, v, called))
		return nil
	})
	want := []string{"readers discord_id,name " + strconv.Itoa(len("1\t"+long+"\n2\t\\\\.\n")), "reader_tokens_id_seq42 true"}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("readStatements = %q, %v; want %q", got, err, want)
	}
	for _, hostile := range []string{
		"COPY (SELECT 1) TO PROGRAM 'touch /tmp/x';\n",
		"COPY public.readers (name) FROM PROGRAM 'id';\n",
		"COPY public.readers (name) FROM stdin; SELECT 1;\n",
		"CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1';\n",
		"SET client_encoding = 'LATIN1';\n",
		"SELECT pg_catalog.setval('public.s', 1, true); DROP TABLE readers;\n",
	} {
		err := readStatements(bufio.NewReader(strings.NewReader(hostile)), func(string, []string, io.Reader) error {
			t.Errorf("%q was taken for a COPY", hostile)
			return nil
		}, func(string, int64, bool) error {
			t.Errorf("%q was taken for a setval", hostile)
			return nil
		})
		var refused RefusedError
		if !errors.As(err, &refused) {
			t.Errorf("%q: %v, want a refusal", hostile, err)
		}
	}
}
