package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mangabookmark/mangabookmark/store"
)

// Bounds of one API write.
const (
	maxAPIBody         = 16 << 10 // bytes; a larger body is 413
	maxSighting        = 50       // chapter numbers in one Sighting
	maxIdempotencyKey  = 255      // characters of an Idempotency-Key
	apiWritesPerMinute = 120      // per token; more is 429
)

// writeHandler does one API write: it answers a value (200) or an error.
// It must change nothing when it answers an error below 500.
type writeHandler func(r *http.Request, body []byte) (any, *apiError)

// write wraps a writer with the rate limit, the body cap and the
// Idempotency-Key rule: a repeat with the same key and body answers the first
// answer and runs nothing; the same key with another body is refused.
func (api *apiServer) write(h writeHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok := tokenFrom(r.Context())
		if wait, ok := api.limit.take(tok.ID, api.d.now()); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(wait))
			api.fail(w, r, apiErr(http.StatusTooManyRequests, apiRateLimited, "More than "+strconv.Itoa(apiWritesPerMinute)+" writes a minute from this token; wait and send again."))
			return
		}
		body, e := readAPIBody(w, r)
		if e != nil {
			api.fail(w, r, e)
			return
		}
		key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
		if len(key) > maxIdempotencyKey {
			api.fail(w, r, apiErr(http.StatusBadRequest, apiBadRequest, "The Idempotency-Key header is longer than 255 characters."))
			return
		}
		if !utf8.ValidString(key) || strings.ContainsRune(key, 0) {
			// PostgreSQL would refuse the bytes (SQLSTATE 22021): a 500 for
			// the client's mistake.
			api.fail(w, r, apiErr(http.StatusBadRequest, apiBadRequest, "The Idempotency-Key header must be UTF-8 text without NUL."))
			return
		}
		if key == "" {
			v, e := h(r, body)
			api.answer(w, r, v, e)
			return
		}
		api.writeOnce(w, r, tok.ReaderID, key, body, h)
	}
}

// writeOnce runs h under an Idempotency-Key.
func (api *apiServer) writeOnce(w http.ResponseWriter, r *http.Request, readerID, key string, body []byte, h writeHandler) {
	ctx, now := r.Context(), api.d.now()
	fingerprint := sha256.Sum256(append([]byte(r.URL.Path+"\n"), body...))
	abandoned := api.d.requestTimeout() + releaseTimeout + claimMargin
	prior, err := api.d.Store.ClaimIdempotencyKey(ctx, readerID, key, fingerprint[:], now, now.Add(-abandoned))
	switch {
	case errors.Is(err, store.ErrKeyTaken) && prior.Status == 0:
		e := apiErr(http.StatusConflict, apiKeyInFlight, "The first request with this Idempotency-Key is still running; send again after Retry-After seconds.")
		e.retryAfter = retryAfterUntil(prior.ClaimedAt.Add(abandoned), now)
		api.fail(w, r, e)
		return
	case errors.Is(err, store.ErrKeyTaken) && !bytes.Equal(prior.RequestHash, fingerprint[:]):
		api.fail(w, r, apiErr(http.StatusUnprocessableEntity, apiKeyReused, "This Idempotency-Key was already used with a different request; use a new key for a new request."))
		return
	case errors.Is(err, store.ErrKeyTaken):
		w.Header().Set("Idempotent-Replayed", "true")
		writeJSON(w, prior.Status, bytes.TrimSuffix(prior.Response, []byte("\n")))
		return
	case err != nil:
		api.internal(w, r, "claim idempotency key", err)
		return
	}
	v, e := h(r, body)
	status, out := answerBody(v, e)
	if status >= 500 {
		api.release(r, readerID, key, now)
	} else {
		api.finish(r, readerID, key, now, status, out)
	}
	if e != nil {
		api.d.Logger.Debug("api refused", "route", routePattern(r), "error", string(e.word))
		e.setHeaders(w)
	}
	writeJSON(w, status, out)
}

// releaseTimeout bounds giving a key back after a failure on our side.
const releaseTimeout = 2 * time.Second

// claimMargin is added to a request's whole time budget before a retry may
// take over its Idempotency-Key claim still in flight (abandoned, in
// writeOnce). The budget is DATABASE_REQUEST_TIMEOUT (dbDeadline ends every
// statement of the request with it, the write's included) and releaseTimeout
// (giving the key back runs after, on a context of its own): past both, the
// first request writes nothing more, and its key stayed in flight only
// because the database went away before it could be given back. The margin covers the replicas' clocks
// disagreeing (the claim carries the claiming process's time) and a statement
// PostgreSQL finishes after its client gave up on it. Too short, and a write
// could run twice at once; too long, and the retry waits that much longer
// (CONTEXT.md, Idempotency-Key).
const claimMargin = 10 * time.Second

// retryAfterUntil is the Retry-After, in whole seconds, that brings a retry
// sent at now past t (the takeover wants the claim strictly older).
func retryAfterUntil(t, now time.Time) string {
	return strconv.Itoa(max(1, int(t.Sub(now)/time.Second)+1))
}

// finish records the answer of a write that happened, on a context of its
// own as release does: a client that hung up after the write (a dropped
// connection, a server closing its connections) cancels the request's
// context, and a key left in flight would answer every retry 409 until the
// takeover (claimMargin) instead of replaying this answer.
func (api *apiServer) finish(r *http.Request, readerID, key string, claimedAt time.Time, status int, out []byte) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), releaseTimeout)
	defer cancel()
	if err := api.d.Store.FinishIdempotencyKey(ctx, readerID, key, claimedAt, status, out, api.d.now()); err != nil {
		api.d.Logger.Error("api: finish idempotency key", "err", err)
	}
}

// release gives a claimed key back: a failure on our side is not an answer
// worth replaying, so a retry with the same key runs again. It runs on a
// context of its own: when the request's deadline is what failed (a frozen
// database, dbDeadline), the request's context is already over, and a key
// left claimed would answer the userscript's retry 409 in flight for a day.
// If giving it back fails too, a retry takes the claim over once it is older
// than the request's whole budget (claimMargin).
func (api *apiServer) release(r *http.Request, readerID, key string, claimedAt time.Time) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), releaseTimeout)
	defer cancel()
	if err := api.d.Store.ReleaseIdempotencyKey(ctx, readerID, key, claimedAt); err != nil {
		api.d.Logger.Error("api: release idempotency key", "err", err)
	}
}

func (api *apiServer) answer(w http.ResponseWriter, r *http.Request, v any, e *apiError) {
	if e != nil {
		api.fail(w, r, e)
		return
	}
	api.reply(w, http.StatusOK, v)
}

// answerBody is the status and bytes of a writer's answer.
func answerBody(v any, e *apiError) (int, []byte) {
	if e != nil {
		return e.status, e.body()
	}
	b, err := json.Marshal(v)
	if err != nil {
		e := apiErr(http.StatusInternalServerError, apiInternal, "The answer could not be written.")
		return e.status, e.body()
	}
	return http.StatusOK, b
}

// readAPIBody reads at most maxAPIBody bytes; one more is 413.
func readAPIBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAPIBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, apiErr(http.StatusRequestEntityTooLarge, apiTooLarge, "The body is larger than 16 KiB.")
	case err != nil:
		return nil, apiErr(http.StatusBadRequest, apiMalformedJSON, "The body could not be read.")
	}
	return body, nil
}
