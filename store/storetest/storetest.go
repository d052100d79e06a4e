// Package storetest gives each test its own fresh database, cloned from a
// migrated template (pgtestdb), on a real PostgreSQL server: the one in
// TEST_DATABASE_URL, else one answering on 127.0.0.1:5432 or the local
// socket. `make test` provides an embedded cluster when neither exists.
package storetest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver pgtestdb uses
	"github.com/peterldowns/pgtestdb"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/localpg"
)

var (
	serverOnce sync.Once
	serverURL  string
	serverErr  error
)

// ServerURL is the admin connection string of the test server.
func ServerURL(t testing.TB) string {
	t.Helper()
	serverOnce.Do(func() { serverURL, serverErr = findServer() })
	if serverErr != nil {
		t.Fatalf("storetest: %v", serverErr)
	}
	return serverURL
}

func findServer() (string, error) {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u, nil
	}
	if u := localpg.Probe(context.Background(), localpg.Existing, Ping); u != "" {
		return u, nil
	}
	return "", fmt.Errorf("no PostgreSQL for tests: set TEST_DATABASE_URL, start one on 127.0.0.1:5432, or run `make test` (it starts an embedded cluster)")
}

// Ping connects to url once.
func Ping(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// config turns the server URL into pgtestdb's shape.
func config(t testing.TB) pgtestdb.Config {
	t.Helper()
	u, err := url.Parse(ServerURL(t))
	if err != nil {
		t.Fatalf("storetest: TEST_DATABASE_URL is not a URL")
	}
	pw, _ := u.User.Password()
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	opts := u.Query()
	if opts.Get("sslmode") == "" {
		opts.Set("sslmode", "disable")
	}
	db := u.Path
	if len(db) > 0 && db[0] == '/' {
		db = db[1:]
	}
	if db == "" {
		db = "postgres"
	}
	return pgtestdb.Config{
		DriverName:                "pgx",
		Host:                      u.Hostname(),
		Port:                      port,
		User:                      u.User.Username(),
		Password:                  pw,
		Database:                  db,
		Options:                   opts.Encode(),
		ForceTerminateConnections: true,
	}
}

// migrator builds the template database from the embedded migrations.
type migrator struct{}

func (migrator) Hash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(store.MigrationsFS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(store.MigrationsFS(), p)
		h.Write([]byte(p + strconv.Itoa(len(b))))
		h.Write(b)
		return err
	})
	return hex.EncodeToString(h.Sum(nil))[:16], err
}

func (migrator) Migrate(_ context.Context, _ *sql.DB, c pgtestdb.Config) error {
	return store.Migrate(c.URL())
}

// URL returns the connection string of a fresh, migrated database that is
// dropped when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	return pgtestdb.Custom(t, config(t), migrator{}).URL()
}

// EmptyURL returns a fresh database with no schema at all (for the
// migration test).
func EmptyURL(t testing.TB) string {
	t.Helper()
	return pgtestdb.Custom(t, config(t), pgtestdb.NoopMigrator{}).URL()
}

// URLAtVersion is a fresh database migrated up to version only: a
// migration's own test writes the rows an older schema held, then runs
// store.Migrate over them.
func URLAtVersion(t testing.TB, version uint) string {
	t.Helper()
	u := EmptyURL(t)
	src, err := iofs.New(store.MigrationsFS(), ".")
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, "pgx5://"+strings.TrimPrefix(u, "postgres://"))
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	defer func() { _, _ = m.Close() }()
	if err := m.Migrate(version); err != nil {
		t.Fatalf("storetest: migrate to %d: %v", version, err)
	}
	return u
}

// Pool opens a pool on a fresh database; cfg may adjust it (e.g. a tracer).
func Pool(t testing.TB, adjust func(*pgxpool.Config)) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(URL(t))
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	store.Tune(cfg)
	if adjust != nil {
		adjust(cfg)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("storetest: open pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// New returns a Store on a fresh database.
func New(t testing.TB) *store.Store {
	t.Helper()
	return store.New(Pool(t, nil))
}

// ClusterDir is a DATA_DIR for an embedded cluster a test starts: short
// enough for the cluster's socket path, and open (0755) to the postgres user
// a root test runs the cluster as — t.TempDir's parent is closed, so the
// cluster would move under /var/lib and outlive the test (ADR 0002). It is
// removed when the test ends.
func ClusterDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
