// Package store is the only code that speaks SQL. Each entity has its own
// file with its statements written beside the methods that run them; every
// argument is bound, never concatenated from input. Times cross the API as
// time.Time in UTC, the zero time for "never", and are stored as timestamptz
// (NULL = never); rows.go holds the two rules pgx is told. Chapter numbers
// travel as canonical decimal strings (word.Chapter) and are compared by
// PostgreSQL as numeric.
package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers pgx5://
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgerrcode"
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
	// lanes is the second pool Open makes for the Lanes and the owner
	// notices (see Lanes); nil when the Store has one pool.
	lanes *pgxpool.Pool
}

// New wraps an existing pool (tests build theirs with a tracer). Its
// config must have been through Tune, which teaches each connection how a
// time is read (rows.go).
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Pools sizes Open's two connection pools. The server's own reads (pages,
// /healthz) and the background work (the Lanes' passes, the owner notices)
// each have their own, so however busy or stuck the background is, it
// cannot take the connections a page needs.
type Pools struct {
	Pages int32 // DATABASE_POOL_SIZE
	Lanes int32 // DATABASE_LANE_POOL_SIZE
}

// Default pool sizes: a page runs its statements one after another, and
// each Lane and the notices it checks use one connection at a time.
const (
	DefaultPoolSize     = 8
	DefaultLanePoolSize = 6
)

// Lanes is the Store the Lanes and the owner notices use: the same
// database through the second pool. A Store with one pool returns itself.
func (s *Store) Lanes() *Store {
	if s.lanes == nil {
		return s
	}
	return &Store{pool: s.lanes}
}

// Bounds a server's own connection gets unless its address sets them: a
// database host that stops answering must not hang a Lane or a page for
// minutes. Every statement the server runs is short; migrations use their
// own connection.
const (
	connectTimeout   = 10 * time.Second
	statementTimeout = "60s"
)

// Open connects to url with two pools sized by sizes (zero fields take the
// defaults) and checks the connection.
func Open(ctx context.Context, url string, sizes Pools) (*Store, error) {
	pages, err := openPool(ctx, url, cmp.Or(sizes.Pages, DefaultPoolSize))
	if err != nil {
		return nil, err
	}
	lanes, err := openPool(ctx, url, cmp.Or(sizes.Lanes, DefaultLanePoolSize))
	if err != nil {
		pages.Close()
		return nil, err
	}
	return &Store{pool: pages, lanes: lanes}, nil
}

func openPool(ctx context.Context, url string, size int32) (*pgxpool.Pool, error) {
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
	Tune(cfg)
	cfg.MaxConns = size
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", redactConnErr(err))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: connect: %w", redactConnErr(err))
	}
	return pool, nil
}

// Tune sets what every connection of the server needs beyond its address:
// PostgreSQL plans each statement for its actual arguments
// (plan_cache_mode = force_custom_plan). pgx caches prepared statements,
// and after five runs PostgreSQL would switch a cached statement to a
// generic plan, which cannot see that "failing_since < $cutoff" or a deep
// keyset cursor is selective, and a deep failing page then walks whole
// indexes (BenchmarkSeriesList measures the difference).
// Batches (Send) always run through the statement cache, so a per-query
// exec mode cannot do this. Planning the Poll's primary-key statements each
// time costs microseconds.
//
// It also counts each statement into the StatementLog of its context (see
// WithStatementLog), unless the caller brought a tracer of its own, and
// teaches each connection to read a NULL time as the zero time, in UTC
// (rows.go).
func Tune(cfg *pgxpool.Config) {
	if cfg.ConnConfig.Tracer == nil {
		cfg.ConnConfig.Tracer = statementTracer{}
	}
	after := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		if after != nil {
			if err := after(ctx, conn); err != nil {
				return err
			}
		}
		return readTimes(ctx, conn)
	}
	if _, set := cfg.ConnConfig.RuntimeParams["plan_cache_mode"]; !set {
		cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	}
}

// Pool exposes the pool to tests that set up or inspect rows directly; the
// server itself goes through the methods (a Lane lock opens its own wake
// session, see TryLockLane).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close closes the pools.
func (s *Store) Close() {
	s.pool.Close()
	if s.lanes != nil {
		s.lanes.Close()
	}
}

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
		case pgerrcode.UniqueViolation, pgerrcode.ForeignKeyViolation:
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
