package poller

import (
	"errors"
	"testing"
	"time"
)

// TestALaneWhoseLeaseAskFailsBacksOff holds the Lane loop's wait while the
// database is away: every failed ask doubles the wait from retakeFirst up
// to retakeMax (a stopped database once got about 20 asks a second), and
// the first ask that answers goes back to the lease's own pace.
func TestALaneWhoseLeaseAskFailsBacksOff(t *testing.T) {
	t.Parallel()
	var l lane
	away := errors.New("connection refused")
	pace := leaseSlack
	var got []time.Duration
	for range 7 {
		got = append(got, l.askAgainIn(away, pace))
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("waits after %d failed asks: %v, want %v", len(got), got, want)
		}
	}
	if w := l.askAgainIn(nil, pace); w != pace {
		t.Fatalf("the first ask that answers waits %v, want the lease's pace %v", w, pace)
	}
	if w := l.askAgainIn(away, pace); w != retakeFirst {
		t.Fatalf("a failure after a recovery waits %v, want the backoff started again at %v", w, retakeFirst)
	}
	if w := l.askAgainIn(away, 30*time.Second); w != 30*time.Second {
		t.Fatalf("a lease found with 30 s left waits %v, never less than the lease's own pace", w)
	}
}
