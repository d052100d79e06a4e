package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/localpg"
)

// DatabaseError is a failure to reach or migrate the database as the one
// line the start stops with: naming DATABASE_URL when it was given, and with
// pgx's one-line-per-address detail folded (it never holds the password).
func DatabaseError(cfg Config, err error) error {
	msg := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
	if cfg.DatabaseURL.Set() {
		return fmt.Errorf("DATABASE_URL: %s", msg)
	}
	return errors.New(msg)
}

// OpenMigrated is OpenDatabase with every migration applied; on failure it
// stops what it started.
func OpenMigrated(ctx context.Context, cfg Config, log *slog.Logger) (url string, stop func(), err error) {
	url, stop, err = OpenDatabase(ctx, cfg, log)
	if err != nil {
		return "", nil, err
	}
	if err := store.Migrate(url); err != nil {
		stop()
		return "", nil, DatabaseError(cfg, err)
	}
	return url, stop, nil
}

// OpenDatabase returns DATABASE_URL, or starts the embedded local cluster in
// DATA_DIR/pg and returns its address. stop stops what was started.
func OpenDatabase(ctx context.Context, cfg Config, log *slog.Logger) (url string, stop func(), err error) {
	if cfg.DatabaseURL.Set() {
		return cfg.DatabaseURL.Reveal(), func() {}, nil
	}
	bin, err := localpg.EnsureBinaries(ctx, log)
	if err != nil {
		return "", nil, err
	}
	cl, err := localpg.Start(ctx, localpg.Options{Dir: filepath.Join(cfg.DataDir, "pg"), BinDir: bin, Logger: log})
	if err != nil {
		return "", nil, err
	}
	stop = func() {
		c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := cl.Stop(c); err != nil {
			log.Warn("local PostgreSQL did not stop cleanly", "err", err)
		}
	}
	if err := ensureDatabase(ctx, cl.URL("postgres"), "mangabookmark"); err != nil {
		stop()
		return "", nil, err
	}
	return cl.URL("mangabookmark"), stop, nil
}

func ensureDatabase(ctx context.Context, adminURL, name string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("local database: connect: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("local database: %w", err)
	}
	if !exists {
		// A database name cannot be a bound parameter; name is our constant.
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("local database: create %s: %w", name, err)
		}
	}
	return nil
}
