package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"
)

type command struct {
	run  func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error
	help string
}

func commands() map[string]command {
	return map[string]command{
		"serve":  {runServe, "run the server with its database (the default)"},
		"testdb": {runTestDB, "run a command with TEST_DATABASE_URL pointing at a PostgreSQL (what `make test` uses)"},
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
		for n, c := range commands() {
			fmt.Fprintf(stdout, "  %-8s %s\n", n, c.help)
		}
		return nil
	}
	c, ok := commands()[name]
	if !ok {
		return fmt.Errorf("unknown command %q (try: mangabookmark help)", name)
	}
	return c.run(ctx, rest, stdin, stdout, stderr, getenv)
}
