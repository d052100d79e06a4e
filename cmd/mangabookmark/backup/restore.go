package backup

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/localpg"
)

// RefusedError is a restore that would overwrite something: its sentence
// says what holds data and what to do.
type RefusedError struct{ Sentence string }

func (e RefusedError) Error() string { return e.Sentence }

// Restore restores file into the database at dbURL and the keys into
// dataDir, then migrates the database up, so a backup made by an older
// version restores and then becomes current. It refuses, before changing
// anything, a database that holds any table or a dataDir whose key differs
// from the backup's: a restore never overwrites.
func Restore(ctx context.Context, file, dbURL, dataDir string) (Manifest, error) {
	work, err := os.MkdirTemp("", "mangabookmark-restore-")
	if err != nil {
		return Manifest{}, err
	}
	defer os.RemoveAll(work)
	dump := filepath.Join(work, dumpName)
	m, keys, err := readTar(file, dump)
	if err != nil {
		return Manifest{}, err
	}
	if err := refuseDatabase(ctx, dbURL); err != nil {
		return Manifest{}, err
	}
	if err := refuseKeys(dataDir, keys); err != nil {
		return Manifest{}, err
	}
	bin, err := localpg.FindClient("pg_restore")
	if err != nil {
		return Manifest{}, err
	}
	if err := runClient(ctx, bin, dbURL, "--no-owner", "--no-acl", "--exit-on-error", "--single-transaction", dump); err != nil {
		return Manifest{}, fmt.Errorf("pg_restore: %w", err)
	}
	if err := writeKeys(dataDir, keys); err != nil {
		return Manifest{}, err
	}
	if err := store.Migrate(dbURL); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// readTar checks the manifest, writes the archive to dump and returns the
// keys.
func readTar(file, dump string) (Manifest, map[string][]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return Manifest{}, nil, err
	}
	defer f.Close()
	notOurs := fmt.Errorf("%s is not a mangabookmark backup (made by `mangabookmark backup FILE`)", file)
	tr := tar.NewReader(f)
	var m Manifest
	keys := map[string][]byte{}
	sawDump := false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Manifest{}, nil, notOurs
		}
		switch name := h.Name; {
		case name == manifestName:
			if err := json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(&m); err != nil {
				return Manifest{}, nil, notOurs
			}
			if m.Format != FormatVersion {
				return Manifest{}, nil, fmt.Errorf("%s is a backup of format %d; this version restores format %d only", file, m.Format, FormatVersion)
			}
		case name == dumpName:
			if err := copyTo(dump, tr); err != nil {
				return Manifest{}, nil, err
			}
			sawDump = true
		case strings.HasPrefix(name, keysDir) && slices.Contains(KeyFiles, strings.TrimPrefix(name, keysDir)):
			b, err := io.ReadAll(io.LimitReader(tr, 1<<20))
			if err != nil {
				return Manifest{}, nil, notOurs
			}
			keys[strings.TrimPrefix(name, keysDir)] = b
		}
	}
	if m.Format == 0 || !sawDump {
		return Manifest{}, nil, notOurs
	}
	return m, keys, nil
}

func copyTo(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// refuseDatabase refuses a database holding any table outside the system
// schemas: rows, or only an applied migration, are somebody's server.
func refuseDatabase(ctx context.Context, dbURL string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("restore: connect to the database: %w", err)
	}
	defer conn.Close(ctx)
	var tables int
	err = conn.QueryRow(ctx, `SELECT count(*) FROM pg_catalog.pg_tables
		WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`).Scan(&tables)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if tables > 0 {
		return RefusedError{fmt.Sprintf("The database already holds %d tables, so restore will not overwrite it: restore into a new, empty database (or an empty DATA_DIR for the embedded one).", tables)}
	}
	return nil
}

// refuseKeys refuses a dataDir holding a key that differs from the
// backup's: replacing it would void what the running key signed.
func refuseKeys(dataDir string, keys map[string][]byte) error {
	for _, k := range KeyFiles {
		want, ok := keys[k]
		if !ok {
			continue
		}
		have, err := os.ReadFile(filepath.Join(dataDir, k))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !bytes.Equal(bytes.TrimSpace(have), bytes.TrimSpace(want)) {
			return RefusedError{fmt.Sprintf("DATA_DIR (%s) already holds a different %s, so restore will not overwrite it: restore into an empty DATA_DIR.", dataDir, k)}
		}
	}
	return nil
}

func writeKeys(dataDir string, keys map[string][]byte) error {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	for _, k := range KeyFiles {
		if b, ok := keys[k]; ok {
			if err := os.WriteFile(filepath.Join(dataDir, k), b, 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}
