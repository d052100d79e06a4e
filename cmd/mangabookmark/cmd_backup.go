package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/cmd/mangabookmark/backup"
	"github.com/mangabookmark/mangabookmark/server"
)

// runBackup is `mangabookmark backup [--force] FILE`: the database and the
// keys under DATA_DIR in one file (package backup, README Back up). It
// prints the entries' names, never a key. An existing FILE is refused
// before any database is opened, unless --force replaces it.
func runBackup(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	force := len(args) > 0 && args[0] == "--force"
	if force {
		args = args[1:]
	}
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		return errors.New("usage: mangabookmark backup [--force] FILE")
	}
	if err := backup.CheckTarget(args[0], force); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	write := backup.Write
	if force {
		write = backup.Overwrite
	}
	return withDatabase(func(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer, getenv func(string) string) error {
		file, dbURL, dataDir, err := backupArgs("backup", args, getenv)
		if err != nil {
			return err
		}
		m, err := write(ctx, dbURL, dataDir, file, time.Now())
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
		fmt.Fprintf(stdout, "Backed up to %s: %v. It holds the keys: keep it where only you can read it.\n", file, m.Entries)
		for _, name := range envKeys(getenv) {
			fmt.Fprintf(stdout, "%s is set in the environment, so it is not in the file: keep it with the file, or the restored server cannot read what it sealed.\n", name)
		}
		return nil
	})(ctx, args, stdin, stdout, stderr, getenv)
}

// envKeys names the keys set in the environment instead of DATA_DIR (README
// Back up): the file cannot hold them, so the owner is told at backup time,
// by name only.
func envKeys(getenv func(string) string) []string {
	var set []string
	for _, name := range []string{"SESSION_KEY", "TOKEN_KEY"} {
		if getenv(name) != "" {
			set = append(set, name)
		}
	}
	return set
}

// runRestore is `mangabookmark restore FILE`: into an empty database and a
// DATA_DIR without other keys, refused otherwise with a sentence. The file
// is read and checked whole (its entries, its keys, its dump's table of
// contents) before any database is opened, so a bad file never starts an
// embedded cluster in DATA_DIR.
func runRestore(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) != 1 {
		return errors.New("usage: mangabookmark restore FILE")
	}
	cfg, err := server.LoadConfig(getenv)
	if err != nil {
		return err
	}
	a, err := backup.Open(ctx, args[0], cfg.DataDir)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer a.Close()
	return withDatabase(func(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer, getenv func(string) string) error {
		_, dbURL, _, err := backupArgs("restore", args, getenv)
		if err != nil {
			return err
		}
		m, err := a.Into(ctx, dbURL)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		fmt.Fprintf(stdout, "Restored the backup of %s: %v. Start the server with this DATA_DIR and database.\n", m.CreatedAt.Format(time.RFC3339), m.Entries)
		return nil
	})(ctx, args, stdin, stdout, stderr, getenv)
}

func backupArgs(name string, args []string, getenv func(string) string) (file, dbURL, dataDir string, err error) {
	if len(args) != 1 {
		return "", "", "", fmt.Errorf("usage: mangabookmark %s FILE", name)
	}
	cfg, err := server.LoadConfig(getenv)
	if err != nil {
		return "", "", "", err
	}
	dbURL = getenv("DATABASE_URL")
	if dbURL == "" {
		return "", "", "", errors.New(name + ": DATABASE_URL is unset")
	}
	return args[0], dbURL, cfg.DataDir, nil
}
