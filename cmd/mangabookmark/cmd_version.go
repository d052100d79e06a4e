package main

import (
	"context"
	"fmt"
	"io"

	"github.com/mangabookmark/mangabookmark/internal/version"
)

// runVersion is `mangabookmark version`: which build this is, one fact a
// line, so a bug report can paste it whole (issue 25, item 1).
func runVersion(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer, _ func(string) string) error {
	if len(args) > 0 {
		return fmt.Errorf("version takes no arguments")
	}
	i := version.Get()
	_, err := fmt.Fprintf(stdout, "mangabookmark %s\ncommit  %s\nbuilt   %s\ngo      %s\n", i.Version, i.Commit, i.Date, i.GoVersion)
	return err
}
