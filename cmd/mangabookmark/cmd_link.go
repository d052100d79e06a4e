package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/server"
	"github.com/mangabookmark/mangabookmark/store"
)

// runLink prints a fresh owner sign-in link (single use, valid
// handlers.LoginLinkTTL) without restarting the server: the link lives in
// the database the running server reads, so any replica honours it.
func runLink(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer, getenv func(string) string) error {
	if len(args) > 0 {
		return fmt.Errorf("link: unexpected argument %q", args[0])
	}
	cfg, err := server.LoadConfig(getenv)
	if err != nil {
		return err
	}
	dbURL := getenv("DATABASE_URL")
	if dbURL == "" {
		return errors.New("link: DATABASE_URL is unset")
	}
	// A database the server never started on has no tables yet.
	if err := store.Migrate(dbURL); err != nil {
		return fmt.Errorf("link: %w", server.DatabaseError(cfg, err))
	}
	st, err := store.Open(ctx, dbURL, store.Pools{})
	if err != nil {
		return fmt.Errorf("link: %w", server.DatabaseError(cfg, err))
	}
	defer st.Close()
	link, err := handlers.NewLoginLink(ctx, st, cfg.PublicBaseURL, cfg.OwnerDiscordID, time.Now())
	if err != nil {
		return fmt.Errorf("link: %w", err)
	}
	fmt.Fprintf(stdout, "Owner sign-in link (single use, valid %s):\n  %s\n", handlers.LoginLinkTTL, link)
	return nil
}
