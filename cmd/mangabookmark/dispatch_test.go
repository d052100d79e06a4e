package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

func TestAnUnknownCommandIsAClearError(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"mangabookmark", "frobnicate"}, func(string) string { return "" }, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `unknown command "frobnicate"`) {
		t.Fatalf("got %v", err)
	}
}

func TestBenchFreshnessIsACommand(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	err := run(context.Background(), []string{"mangabookmark", "bench-freshness", "-n", "600", "-hours", "30", "-warmup", "6", "-json"}, func(string) string { return "" }, nil, &out, io.Discard)
	if err != nil || !strings.Contains(out.String(), `"round_robin"`) {
		t.Fatalf("err %v, output %q", err, out.String())
	}
}
