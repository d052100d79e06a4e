package notify

import (
	"context"
	"net/http/httptrace"
	"sync/atomic"
)

// WatchWritten returns ctx with a trace that notes when a request made with
// it has been written whole, and a report of whether one was. A POST that
// fails after that point (a timeout, a reset while waiting for the answer)
// may have been received: Discord's webhooks and push services take no
// idempotency key, so it must not be sent again (docs/adr/0005). A failure
// before it (a refused dial, a DNS error) sent nothing and is retried.
func WatchWritten(ctx context.Context) (context.Context, func() bool) {
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			wrote.Store(true)
		}
	}}
	return httptrace.WithClientTrace(ctx, trace), wrote.Load
}
