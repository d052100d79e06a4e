package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mangabookmark/mangabookmark/cmd/mangabookmark/backup"
	"github.com/mangabookmark/mangabookmark/server"
)

// runBackup is `mangabookmark backup FILE`: the database and the keys under
// DATA_DIR in one file (package backup, README Back up). It prints the
// entries' names, never a key.
func runBackup(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer, getenv func(string) string) error {
	file, dbURL, dataDir, err := backupArgs("backup", args, getenv)
	if err != nil {
		return err
	}
	m, err := backup.Write(ctx, dbURL, dataDir, file, time.Now())
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(stdout, "Backed up to %s: %v. It holds the keys: keep it where only you can read it.\n", file, m.Entries)
	for _, name := range envKeys(getenv) {
		fmt.Fprintf(stdout, "%s is set in the environment, so it is not in the file: keep it with the file, or the restored server cannot read what it sealed.\n", name)
	}
	return nil
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
// DATA_DIR without other keys, refused otherwise with a sentence.
func runRestore(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer, getenv func(string) string) error {
	file, dbURL, dataDir, err := backupArgs("restore", args, getenv)
	if err != nil {
		return err
	}
	m, err := backup.Restore(ctx, file, dbURL, dataDir)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(stdout, "Restored the backup of %s: %v. Start the server with this DATA_DIR and database.\n", m.CreatedAt.Format(time.RFC3339), m.Entries)
	return nil
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
