// Package store is the only code that speaks SQL. Each entity has its own
// file with its statements written beside the methods that run them; every
// argument is bound, never concatenated from input. Times cross the API as
// time.Time, the zero time for "never", and are stored as unix milliseconds
// (0 = never); rows.go is the one place that converts. Chapter numbers
// travel as canonical decimal strings (word.Chapter) and are compared by
// PostgreSQL as numeric.
package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers pgx5://
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/migrations"
)

// ErrNotFound: the row asked for does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict: the change would break a rule the database keeps (a
// duplicate, or a Series still bookmarked by a Reader).
var ErrConflict = errors.New("conflict")

// Store wraps the pool. Its zero value is unusable; use New or Open.
type Store struct {
	pool *pgxpool.Pool
}

// New wraps an existing pool (tests build theirs with a tracer).
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Bounds a server's own connection gets unless its address sets them: a
// database host that stops answering must not hang a Lane or a page for
// minutes. Every statement the server runs is short; migrations use their
// own connection.
const (
	connectTimeout   = 10 * time.Second
	statementTimeout = "60s"
)

// Open connects to url and checks the connection.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("store: parse database address: %w", redactConnErr(err))
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	if _, set := cfg.ConnConfig.RuntimeParams["statement_timeout"]; !set {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = statementTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", redactConnErr(err))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: connect: %w", redactConnErr(err))
	}
	return &Store{pool: pool}, nil
}

// Pool exposes the pool to tests that set up or inspect rows directly; the
// server itself goes through the methods (the Lane locks open their own
// connections, see TryLockLane).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", redactConnErr(err))
	}
	return nil
}

// Migrate applies every embedded migration not yet applied.
func Migrate(url string) error {
	m, err := newMigrate(url)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("store: migrate up: %w", err)
	}
	return nil
}

// MigrateDown reverts every migration (used by the migration test).
func MigrateDown(url string) error {
	m, err := newMigrate(url)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Down(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("store: migrate down: %w", err)
	}
	return nil
}

// MigrationsFS is the embedded schema (the test harness hashes it).
func MigrationsFS() fs.FS { return migrations.FS }

func newMigrate(url string) (*migrate.Migrate, error) {
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("store: read migrations: %w", err)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("store: parse database address: %w", redactConnErr(err))
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, "pgx5://"+stripScheme(cfg.ConnString()))
	if err != nil {
		return nil, fmt.Errorf("store: open migrations: %w", redactConnErr(err))
	}
	return m, nil
}

func stripScheme(u string) string {
	for _, p := range []string{"postgres://", "postgresql://"} {
		if len(u) > len(p) && u[:len(p)] == p {
			return u[len(p):]
		}
	}
	return u
}

// translate maps PostgreSQL errors onto the store's sentinels, once.
func translate(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch pg.Code {
		case "23505", "23503": // unique_violation, foreign_key_violation
			return fmt.Errorf("%w: %s", ErrConflict, pg.ConstraintName)
		}
	}
	return err
}

// redactConnErr keeps a connection string's password out of error text.
func redactConnErr(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return errors.New("malformed database address")
	}
	return err
}
