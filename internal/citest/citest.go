// Package citest is what a test does when the machine lacks something the
// test needs: on a developer's machine it skips, and in CI (CI=true, which
// .ci/run sets) it fails, because there a skip would pass silently.
package citest

import (
	"fmt"
	"os"
	"testing"
)

// Skip skips t with the reason, unless CI=true, where the same reason fails t.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("required in CI (CI=true): %s", why)
	}
	t.Skip(why)
}
