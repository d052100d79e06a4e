package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// The demo is the whole system end to end: the real server polls six
// loopback stand-in Sites through the real read path, writes Latest
// Chapters, completion hints and failure rows, and sends the owner notice
// the seeded history calls for to the local sink.
func TestTheDemoShowsTheWholeSystemWorking(t *testing.T) {
	t.Parallel()
	dbURL := storetest.URL(t)
	env := map[string]string{"DATABASE_URL": dbURL, "LISTEN_ADDR": freeAddr(t), "DATA_DIR": t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"mangabookmark", "demo", "--fixtures", "../../adapters/testdata"}, func(k string) string { return env[k] }, nil, &stdout, &stderr)
	}()

	conn := func() *pgx.Conn {
		c, err := pgx.Connect(context.Background(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}()
	type state struct{ chapters, hints, notFound, refusing int }
	read := func() (s state) {
		_ = conn.QueryRow(context.Background(), `SELECT
			(SELECT count(*) FROM series WHERE latest_chapter_num IS NOT NULL),
			(SELECT count(*) FROM series WHERE site_completed_at > 0),
			(SELECT count(*) FROM poll_failures WHERE outcome = 'not_found'),
			(SELECT count(*) FROM poll_lanes WHERE site = 'novelfull' AND refuse_until > 0)`).Scan(&s.chapters, &s.hints, &s.notFound, &s.refusing)
		return s
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-done:
			t.Fatalf("the demo stopped: %v\n%s", err, stderr.String())
		default:
		}
		s := read()
		if s.chapters >= 10 && s.hints >= 4 && s.notFound == 1 && s.refusing == 1 && strings.Contains(stdout.String(), "owner notice [no-browser-route] novelfull") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s: %+v\nstdout:\n%s\nstderr:\n%s", s, stdout.String(), stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("the demo did not stop cleanly: %v", err)
	}
	if n := strings.Count(stdout.String(), "owner notice ["); n != 1 {
		t.Errorf("%d owner notices, want exactly the one the history calls for:\n%s", n, stdout.String())
	}
}
