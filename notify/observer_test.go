package notify_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/word"
)

// observed records what a Notifier tells its Observer.
type observed struct {
	mu  sync.Mutex
	got []word.SendResult
}

func (o *observed) NoticeSent(r word.SendResult) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, r)
}

// TestEachAnswerIsObservedByItsResult: the metrics' send result of each
// kind of answer Discord gives an owner notice, one POST each (issue 25,
// item 5).
func TestEachAnswerIsObservedByItsResult(t *testing.T) {
	t.Parallel()
	status := func(code int) func(int, http.ResponseWriter, *http.Request) bool {
		return func(_ int, w http.ResponseWriter, _ *http.Request) bool {
			w.WriteHeader(code)
			return code < 300
		}
	}
	hangUp := func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return false
	}
	cases := []struct {
		name  string
		reply func(int, http.ResponseWriter, *http.Request) bool
		want  word.SendResult
	}{
		{"a 204 is sent", status(http.StatusNoContent), word.SendSent},
		{"a 404 is a webhook gone", status(http.StatusNotFound), word.SendGone},
		{"a 429 is rate limited", status(http.StatusTooManyRequests), word.SendRateLimited},
		{"a 503 is a server error", status(http.StatusServiceUnavailable), word.SendServerError},
		{"a 400 is rejected", status(http.StatusBadRequest), word.SendRejected},
		{"a connection dropped unanswered is no answer", hangUp, word.SendNoAnswer},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config{reply: tc.reply})
			obs := &observed{}
			n, err := notify.New(notify.Options{Store: h.st, WebhookURL: h.sink.url(), Observer: obs})
			if err != nil {
				t.Fatal(err)
			}
			h.insertPass("comix", hours(0), stallPass)
			h.insertPass("comix", hours(13), stallPass)
			if err := n.Check(context.Background(), "comix", hours(13)); err != nil {
				t.Fatal(err)
			}
			if len(obs.got) != 1 || obs.got[0] != tc.want {
				t.Fatalf("observed %v, want [%s]", obs.got, tc.want)
			}
		})
	}
}
