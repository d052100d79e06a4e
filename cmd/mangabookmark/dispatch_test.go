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
