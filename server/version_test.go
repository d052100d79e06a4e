package server

import (
	"context"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/internal/version"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// A log pasted into a bug report names the build in its first line (issue
// 25, item 1).
func TestTheFirstLogLineNamesTheVersion(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	env := map[string]string{"DATABASE_URL": storetest.URL(t), "DATA_DIR": t.TempDir(), "LISTEN_ADDR": addr}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, func(k string) string { return env[k] }, &stdout, &stderr) }()
	waitHealthy(t, "http://"+addr, done)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	first, _, _ := strings.Cut(stderr.String(), "\n")
	b := version.Get()
	for _, want := range []string{"msg=\"mangabookmark starting\"", "version=" + b.Version, "commit=" + b.Commit, "go=" + b.GoVersion} {
		if !strings.Contains(first, want) {
			t.Fatalf("the first log line %q does not say %s", first, want)
		}
	}
}
