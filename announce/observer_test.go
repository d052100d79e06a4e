package announce_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mangabookmark/mangabookmark/announce"
	"github.com/mangabookmark/mangabookmark/word"
)

// TestEachAnswerHasItsSendResult: what each answer a Sender gives comes to
// in the metrics' send counter (issue 25, item 5).
func TestEachAnswerHasItsSendResult(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want word.SendResult
	}{
		{"delivered is sent", nil, word.SendSent},
		{"a 429 is rate limited", &announce.RetryLater{Reason: "Discord answered 429"}, word.SendRateLimited},
		{"the Readers' webhook's 404 is gone", announce.ErrChannelGone, word.SendGone},
		{"a push subscription's 410 is gone", fmt.Errorf("push: 410: %w", announce.ErrGone), word.SendGone},
		{"no answer", fmt.Errorf("%w: timeout", announce.ErrTransport), word.SendNoAnswer},
		{"a 503 is a server error", &announce.StatusError{Status: 503, Reason: "Discord answered 503"}, word.SendServerError},
		{"a 400 is rejected", &announce.StatusError{Status: 400, Reason: "Discord answered 400"}, word.SendRejected},
		{"anything else failed", errors.New("push payload"), word.SendFailed},
	}
	for _, tc := range cases {
		if got := announce.Result(tc.err); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
