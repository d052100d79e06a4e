package word

// SendResult is what one message to an outside endpoint came to: an owner
// notice posted to Discord, or a Reader announcement on its channel. It is
// the result label of the send counters (issue 25, item 5), so the set is
// fixed here and nowhere else: a status code never becomes a label.
type SendResult string

// The send results.
const (
	// SendSent: the endpoint accepted it (2xx).
	SendSent SendResult = "sent"
	// SendRateLimited: 429; the channel waits its Retry-After.
	SendRateLimited SendResult = "rate_limited"
	// SendServerError: 5xx; a later pass tries again.
	SendServerError SendResult = "server_error"
	// SendNoAnswer: no answer at all (timeout, refused connection).
	SendNoAnswer SendResult = "no_answer"
	// SendGone: the endpoint is gone for good (a webhook's 404, a push
	// subscription's 404 or 410).
	SendGone SendResult = "gone"
	// SendRejected: another 4xx: the endpoint refused the message itself.
	SendRejected SendResult = "rejected"
	// SendFailed: anything else (the message could not even be built).
	SendFailed SendResult = "failed"
)

// SendResults lists every SendResult.
var SendResults = []SendResult{SendSent, SendRateLimited, SendServerError, SendNoAnswer, SendGone, SendRejected, SendFailed}
