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

// OpenMigrated is a server's database, named server ("serve", "demo"), with
// every migration applied; on failure it stops what it started. Unlike a
// command beside the server, a server owns the embedded cluster it runs on:
// a second server on one DATA_DIR is refused (localpg.Options.Server).
func OpenMigrated(ctx context.Context, cfg Config, log *slog.Logger, server string) (url string, stop func(), err error) {
	url, stop, err = openDatabase(ctx, cfg, log, server)
	if err != nil {
		return "", nil, err
	}
	if err := store.Migrate(url); err != nil {
		stop()
		return "", nil, DatabaseError(cfg, err)
	}
	return url, stop, nil
}

// OpenDatabase is a command's database beside the server: DATABASE_URL, or
// the embedded local cluster in DATA_DIR/pg, attached to while a server runs
// it and started otherwise. stop stops what was started.
func OpenDatabase(ctx context.Context, cfg Config, log *slog.Logger) (url string, stop func(), err error) {
	return openDatabase(ctx, cfg, log, "")
}

func openDatabase(ctx context.Context, cfg Config, log *slog.Logger, server string) (url string, stop func(), err error) {
	if cfg.DatabaseURL.Set() {
		return cfg.DatabaseURL.Reveal(), func() {}, nil
	}
	bin, err := localpg.EnsureBinaries(ctx, log)
	if err != nil {
		return "", nil, err
	}
	o := LocalCluster(cfg.DataDir)
	o.BinDir, o.Logger, o.Server = bin, log, server
	cl, err := localpg.Start(ctx, o)
	var held *localpg.HeldError
	if errors.As(err, &held) {
		// Issue 22, item 9: attached, this server would lose its database
		// the moment the other one stopped.
		return "", nil, fmt.Errorf("another mangabookmark %s (pid %d) is using the embedded database in DATA_DIR (%s); stop it first, or point DATABASE_URL at a shared PostgreSQL", held.Server, held.PID, cfg.DataDir)
	}
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

// LocalCluster is the embedded cluster of dataDir (DATA_DIR): DATA_DIR/pg,
// or where localpg.Where places it for a root process.
func LocalCluster(dataDir string) localpg.Options {
	return localpg.Options{Dir: filepath.Join(dataDir, "pg")}
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
