package notify

import (
	"testing"
	"time"
)

// FuzzRetryAfter: whatever Discord (or anything answering at the address)
// puts in a 429's body and Retry-After header, the wait is between zero and
// the cap — never negative, never unbounded.
func FuzzRetryAfter(f *testing.F) {
	f.Add([]byte(`{"retry_after": 1.5, "global": false}`), "2")
	f.Add([]byte(`{"retry_after": 1e300}`), "")
	f.Add([]byte(`{"retry_after": -4}`), "-1")
	f.Add([]byte(`not json`), "Wed, 21 Oct 2026 07:28:00 GMT")
	f.Add([]byte(``), "NaN")
	f.Add([]byte(``), "+Inf")
	f.Fuzz(func(t *testing.T, body []byte, header string) {
		d := retryAfter(body, header)
		if d < 0 || d > maxRetryAfter {
			t.Fatalf("retryAfter(%q, %q) = %v, want within [0, %v]", body, header, d, maxRetryAfter)
		}
	})
}

func TestAHugeRetryAfterIsCappedNotWrapped(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body, header string
	}{{`{"retry_after": 1e300}`, ""}, {``, "1e300"}, {``, "+Inf"}, {`{"retry_after": 1e10}`, ""}} {
		if d := retryAfter([]byte(c.body), c.header); d != maxRetryAfter {
			t.Errorf("retryAfter(%q, %q) = %v, want the cap %v", c.body, c.header, d, maxRetryAfter)
		}
	}
	if d := retryAfter([]byte(`{"retry_after": 2}`), ""); d != 2*time.Second {
		t.Errorf("a plain 2 s reads %v", d)
	}
}
