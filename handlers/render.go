package handlers

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"

	"github.com/a-h/templ"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
)

// render writes a component buffered, so a render error becomes a clean 500
// rather than half a page.
func render(w http.ResponseWriter, r *http.Request, log *slog.Logger, status int, c templ.Component) {
	var buf bytes.Buffer
	// Drawing needs no deadline: the request's (dbDeadline) is for its
	// database work, and the page saying that work ran out must still draw.
	if err := c.Render(context.WithoutCancel(r.Context()), &buf); err != nil {
		log.Error("render failed", "route", routePattern(r), "err", err)
		toMessageSlot(w, r)
		http.Error(w, "Something went wrong while drawing this page.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Add("Vary", "HX-Request")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail renders the plain error page: one heading, one sentence, never an
// internal error string. An htmx request gets the sentence alone, moved to
// the page's message slot: swapped into the region it aimed at, a whole
// error page would replace the detail or the list.
func fail(w http.ResponseWriter, r *http.Request, log *slog.Logger, status int, sentence string) {
	if wantsFragment(r) {
		toMessageSlot(w, r)
		render(w, r, log, status, components.Flash(sentence, true))
		return
	}
	render(w, r, log, status, components.ErrorPage(viewerFrom(r.Context()), http.StatusText(status), sentence))
}

type viewerKey struct{}

func withViewer(ctx context.Context, v components.Viewer) context.Context {
	return context.WithValue(ctx, viewerKey{}, v)
}

// viewerFrom is who the session says is signed in (zero when nobody).
func viewerFrom(ctx context.Context) components.Viewer {
	v, _ := ctx.Value(viewerKey{}).(components.Viewer)
	return v
}

// toMessageSlot sends an htmx answer to the layout's #page-message instead
// of the region the request aimed at.
func toMessageSlot(w http.ResponseWriter, r *http.Request) {
	if wantsFragment(r) {
		w.Header().Set("HX-Retarget", "#page-message")
		w.Header().Set("HX-Reswap", "innerHTML")
	}
}

// Unavailable is the one sentence for a request the database could not
// serve (down, restarting, or slower than the request's deadline).
const Unavailable = "The database is unavailable; nothing was changed."

// unavailableRetryAfter is the Retry-After (seconds) of every answer that
// the database is unavailable: pages, push.js and the token API alike.
const unavailableRetryAfter = "5"

// failStore answers a store error: 503 with Unavailable when the database
// could not be reached in time (one warning line), else 500 with sentence
// and one error line carrying msg and attrs. An htmx request's answer goes
// to the message slot, so the form it came from keeps what was typed.
func failStore(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error, sentence, msg string, attrs ...any) {
	if store.Unavailable(err) {
		log.Warn("database unavailable", "method", r.Method, "route", routePattern(r), "err", err)
		w.Header().Set("Retry-After", unavailableRetryAfter)
		fail(w, r, log, http.StatusServiceUnavailable, Unavailable)
		return
	}
	log.Error(msg, append(attrs, "err", err)...)
	fail(w, r, log, http.StatusInternalServerError, sentence)
}
