package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/store"
)

// RefusedError is a backup or a restore refused before it changed
// anything: its sentence says what and what to do.
type RefusedError struct{ Sentence string }

func (e RefusedError) Error() string { return e.Sentence }

// Restore restores file into the database at dbURL and the keys into
// dataDir: Open, then Into.
func Restore(ctx context.Context, file, dbURL, dataDir string) (Manifest, error) {
	a, err := Open(ctx, file, dataDir)
	if err != nil {
		return Manifest{}, err
	}
	defer a.Close()
	return a.Into(ctx, dbURL)
}

// Archive is a backup file read and checked, not yet restored: its dump
// copied to a private work directory, its keys, its table of contents and
// the migration its rows were written under.
type Archive struct {
	Manifest Manifest
	work     string
	dump     string
	dataDir  string
	keys     map[string][]byte
	toc      []tocEntry
	version  uint
}

// Open reads and checks file for a restore into dataDir, before any
// database is opened or created: every entry a regular file within its
// cap, every key one serve would start with and none that differs from
// one dataDir holds, and a dump whose table of contents holds only kinds of
// object our migrations make (ADR 0023). It writes nothing but the dump's
// copy in a private temporary directory, which Close removes.
func Open(ctx context.Context, file, dataDir string) (*Archive, error) {
	work, err := os.MkdirTemp("", "mangabookmark-restore-")
	if err != nil {
		return nil, err
	}
	a := &Archive{work: work, dump: filepath.Join(work, dumpName), dataDir: dataDir}
	if err := a.open(ctx, file); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

func (a *Archive) open(ctx context.Context, file string) error {
	m, keys, err := readTar(file, a.dump)
	if err != nil {
		return err
	}
	a.Manifest, a.keys = m, keys
	if err := refuseKeys(a.dataDir, keys); err != nil {
		return err
	}
	if a.toc, err = listTOC(ctx, a.dump); err != nil {
		return err
	}
	a.version, err = dumpVersion(ctx, a.dump, a.toc)
	return err
}

// Close removes the dump's copy.
func (a *Archive) Close() { os.RemoveAll(a.work) }

// Into restores the archive into the empty database at dbURL, then writes
// the keys 0600 and migrates up, so a backup made by an older version
// restores and then becomes current. The schema is our migrations' own, up
// to the backup's version, and only the rows come from the dump, all in
// one transaction: a refusal leaves the database as empty as it was.
func (a *Archive) Into(ctx context.Context, dbURL string) (Manifest, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return Manifest{}, fmt.Errorf("restore: connect to the database: %w", err)
	}
	defer conn.Close(ctx)
	if err := refuseDatabase(ctx, conn); err != nil {
		return Manifest{}, err
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if err := migrateTo(ctx, tx, a.version); err != nil {
			return err
		}
		if err := checkTOC(ctx, tx, a.toc); err != nil {
			return err
		}
		return loadRows(ctx, tx, a.dump, a.toc)
	})
	if err != nil {
		return Manifest{}, err
	}
	if err := writeKeys(a.dataDir, a.keys); err != nil {
		return Manifest{}, err
	}
	if err := store.Migrate(dbURL); err != nil {
		return Manifest{}, err
	}
	return a.Manifest, nil
}

// refuseDatabase refuses a database holding any table outside the system
// schemas: rows, or only an applied migration, are somebody's server.
func refuseDatabase(ctx context.Context, conn *pgx.Conn) error {
	var tables int
	err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_catalog.pg_tables
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
