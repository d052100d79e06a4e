package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mangabookmark/mangabookmark/migrations"
)

// Schema is where the database's migrations stand against the ones this
// binary embeds: what /readyz reads (issue 25, item 7).
type Schema struct {
	Applied  uint // the version golang-migrate recorded; 0 when none ran
	Dirty    bool // a migration started and did not finish
	Embedded uint // the newest migration in the binary
}

// Current says every embedded migration has been applied, cleanly.
func (s Schema) Current() bool { return !s.Dirty && s.Applied >= s.Embedded }

// ReadSchema reads golang-migrate's one-row record: a single primary-key
// read, cheap enough for a load balancer's probe.
func (s *Store) ReadSchema(ctx context.Context) (Schema, error) {
	sc := Schema{Embedded: newestMigration()}
	var applied int64
	err := s.pool.QueryRow(ctx, `SELECT version, dirty FROM schema_migrations LIMIT 1`).Scan(&applied, &sc.Dirty)
	var pg *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows), errors.As(err, &pg) && pg.Code == pgerrcode.UndefinedTable:
		return sc, nil // no migration has run on this database
	case err != nil:
		return Schema{}, fmt.Errorf("store: read schema version: %w", redactConnErr(err))
	}
	sc.Applied = uint(max(applied, 0))
	return sc, nil
}

// newestMigration is the highest NNNN of the embedded NNNN_name.up.sql
// files, read once.
var newestMigration = sync.OnceValue(func() uint {
	var newest uint
	entries, _ := fs.ReadDir(migrations.FS, ".")
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if n, err := strconv.ParseUint(num, 10, 64); ok && err == nil && uint(n) > newest {
			newest = uint(n)
		}
	}
	return newest
})
