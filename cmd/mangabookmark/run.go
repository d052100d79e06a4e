package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os/signal"
	"slices"
	"syscall"

	"github.com/mangabookmark/mangabookmark/cmd/mangabookmark/bench"
	"github.com/mangabookmark/mangabookmark/cmd/mangabookmark/demo"
	"github.com/mangabookmark/mangabookmark/cmd/mangabookmark/freshness"
	"github.com/mangabookmark/mangabookmark/server"
)

type command struct {
	run  func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error
	help string
}

func commands() map[string]command {
	return map[string]command{
		"serve":           {runServe, "run the server with its database (the default)"},
		"testdb":          {runTestDB, "run a command with TEST_DATABASE_URL pointing at a PostgreSQL (what `make test` uses)"},
		"parse":           {runParse, "parse a saved Site page: parse --site SITE [--url URL] FILE|-"},
		"fetch":           {runFetch, "read one Series address through the real path and print the outcome and facts; exits 3 unless ok"},
		"demo":            {demo.Run, "six local stand-in Sites, a webhook sink and the server polling them (run from the repository)"},
		"notices":         {withDatabase(runNotices), "list the open owner notices (--json); exits non-zero while one is pending"},
		"link":            {withDatabase(runLink), "print a fresh owner sign-in link (single use, valid 15 minutes) on the address the running server recorded, no restart needed (what `make link` runs)"},
		"backup":          {runBackup, "write the database and the keys in DATA_DIR to one file: backup [--force] FILE (it holds secrets; 0600; --force replaces an existing FILE)"},
		"restore":         {runRestore, "restore a backup into an empty database and DATA_DIR: restore FILE (refuses a non-empty one)"},
		"bench":           {bench.Run, "the owner's pages at N Series, measured against the real server: bench -n N (what `make bench N=...` runs)"},
		"bench-freshness": {freshness.Run, "release-to-detection delay at N Series, round-robin against the scheduler, simulated: bench-freshness -n N [-hours H] [-seed S] [-listing-loss P] [-listing-down HOURS] [-json]"},
		"version":         {runVersion, "print the version, the commit and the build date of this binary"},
	}
}

// run is the whole program: main only calls it, and tests call it with a
// fake getenv and their own writers.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	name, rest := "serve", []string(nil)
	if len(args) > 1 {
		name, rest = args[1], args[2:]
	}
	if name == "help" || name == "-h" || name == "--help" {
		fmt.Fprintln(stdout, "usage: mangabookmark [command] [args]\n\ncommands:")
		cmds := commands()
		for _, n := range slices.Sorted(maps.Keys(cmds)) {
			fmt.Fprintf(stdout, "  %-8s %s\n", n, cmds[n].help)
		}
		return nil
	}
	if name == "--version" {
		name = "version"
	}
	c, ok := commands()[name]
	if !ok {
		return fmt.Errorf("unknown command %q (try: mangabookmark help)", name)
	}
	return c.run(ctx, rest, stdin, stdout, stderr, getenv)
}

// runServe is `mangabookmark serve`: the server, which takes no arguments.
func runServe(ctx context.Context, _ []string, _ io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	return server.Run(ctx, getenv, stdout, stderr)
}

// withDatabase gives a command DATABASE_URL even when it is unset: the
// embedded local cluster, attached to if the server is running, else started
// for the command and stopped after it.
func withDatabase(next func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error) func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	return func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
		if getenv("DATABASE_URL") != "" {
			return next(ctx, args, stdin, stdout, stderr, getenv)
		}
		cfg, err := server.LoadConfig(getenv)
		if err != nil {
			return err
		}
		url, stop, err := server.OpenDatabase(ctx, cfg, server.NewLogger(io.Discard, 0))
		if err != nil {
			return err
		}
		defer stop()
		return next(ctx, args, stdin, stdout, stderr, func(k string) string {
			if k == "DATABASE_URL" {
				return url
			}
			return getenv(k)
		})
	}
}
