package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/server"
	"github.com/mangabookmark/mangabookmark/store/localpg"
)

// runTestDB runs a command (the test suite) with TEST_DATABASE_URL set: the
// one already set, else a PostgreSQL the machine runs, else the embedded
// cluster in DATA_DIR/testpg, started for the run and stopped after it.
func runTestDB(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return errors.New("usage: mangabookmark testdb -- COMMAND [ARGS...]")
	}
	url, from := getenv("TEST_DATABASE_URL"), "TEST_DATABASE_URL"
	if url == "" {
		from = "found running on this machine"
		url = localpg.Probe(ctx, localpg.Existing, func(ctx context.Context, u string) error {
			c, err := pgx.Connect(ctx, u)
			if err != nil {
				return err
			}
			return c.Close(ctx)
		})
	}
	if url == "" {
		dataDir := getenv("DATA_DIR")
		if dataDir == "" {
			dataDir = "var"
		}
		log := server.NewLogger(stderr, 0)
		bin, err := localpg.EnsureBinaries(ctx, log)
		if err != nil {
			return err
		}
		cl, err := localpg.Start(ctx, localpg.Options{Dir: filepath.Join(dataDir, "testpg"), BinDir: bin, Logger: log})
		if err != nil {
			return err
		}
		defer func() {
			c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = cl.Stop(c)
		}()
		url, from = cl.URL("postgres"), "the embedded cluster in "+filepath.Join(dataDir, "testpg")
	}
	fmt.Fprintln(stderr, "testdb: the tests use PostgreSQL "+describeDB(url)+" ("+from+")")
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "TEST_DATABASE_URL="+url)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	return nil
}

// describeDB names a PostgreSQL by where it listens and its user, never its
// password: the one line `make test` prints about the server it used.
func describeDB(url string) string {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return "at an address that does not parse"
	}
	where := fmt.Sprintf("on %s:%d", cfg.Host, cfg.Port)
	if filepath.IsAbs(cfg.Host) {
		where = "on the socket in " + cfg.Host
	}
	return where + " as " + cfg.User
}
