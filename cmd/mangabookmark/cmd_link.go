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
// the database the running server reads, so any replica honours it. The
// link is on the address the server recorded at start, as the notices
// command reads the server's settings: a command run without the server's
// LISTEN_ADDR or PUBLIC_BASE_URL must not print a link to nowhere (issue
// 23, item 3).
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
	hook, recorded, err := st.ReadServerWebhook(ctx)
	if err != nil {
		return fmt.Errorf("link: %w", err)
	}
	base := hook.PublicBaseURL
	if !recorded || base == "" {
		base = cfg.PublicBaseURL
		fmt.Fprintf(stdout, "No server has recorded its address in this database yet: the link is on PUBLIC_BASE_URL as this command reads it, %s.\n", base)
	}
	link, err := handlers.NewLoginLink(ctx, st, base, cfg.OwnerDiscordID, time.Now())
	if err != nil {
		return fmt.Errorf("link: %w", err)
	}
	fmt.Fprintf(stdout, "Owner sign-in link (single use, valid %s):\n  %s\n", handlers.LoginLinkTTL, link)
	return nil
}
