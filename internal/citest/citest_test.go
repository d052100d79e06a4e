package citest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/internal/citest"
)

// TestHelperSkips is not a test of its own: the test below runs it in a
// child process under each value of CI.
func TestHelperSkips(t *testing.T) {
	if os.Getenv("CITEST_HELPER") == "" {
		t.Skip("run by TestASkipIsAFailureInCIAndASkipElsewhere")
	}
	citest.Skip(t, "no %s here", "widget")
}

func TestASkipIsAFailureInCIAndASkipElsewhere(t *testing.T) {
	for ci, want := range map[string]string{"true": "--- FAIL", "": "--- SKIP"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSkips$", "-test.v")
		cmd.Env = append(os.Environ(), "CITEST_HELPER=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		if !strings.Contains(string(out), want) || !strings.Contains(string(out), "no widget here") || (err != nil) != (ci == "true") {
			t.Errorf("CI=%q: want %s with the reason, got %v:\n%s", ci, want, err, out)
		}
	}
}
