package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"
)

// probeTimeout bounds a probe's database work: a monitor wants an answer,
// not a request that waits as long as a page may.
const probeTimeout = 2 * time.Second

// probe is what /healthz and /readyz answer: a line of text, or JSON for a
// client that asks for it (Accept: application/json). It names the build,
// never a setting or an error's text.
type probe struct {
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Version string `json:"version"`
	Commit  string `json:"commit"`
}

// handleHealthz is liveness: 200 when the database answers and 503 when
// not (issue 25, item 7 keeps it so).
func handleHealthz(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), probeTimeout)
		defer cancel()
		if err := d.Store.Ping(ctx); err != nil {
			d.Logger.Warn("health check: database does not answer", "err", err)
			answerProbe(w, r, d, http.StatusServiceUnavailable, probe{Status: "unavailable", Reason: "database unavailable"})
			return
		}
		answerProbe(w, r, d, http.StatusOK, probe{Status: "ok"})
	})
}

// handleReadyz is readiness, for a load balancer in front of replicas: 503
// while the database is unreachable or its schema is behind this binary's
// migrations (or a migration did not finish), 200 otherwise. One
// primary-key read (store.ReadSchema).
func handleReadyz(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), probeTimeout)
		defer cancel()
		sc, err := d.Store.ReadSchema(ctx)
		switch {
		case err != nil:
			d.Logger.Warn("readiness check: database does not answer", "err", err)
			answerProbe(w, r, d, http.StatusServiceUnavailable, probe{Status: "not ready", Reason: "database unavailable"})
		case sc.Dirty:
			answerProbe(w, r, d, http.StatusServiceUnavailable, probe{Status: "not ready",
				Reason: fmt.Sprintf("migration %d did not finish", sc.Applied)})
		case !sc.Current():
			answerProbe(w, r, d, http.StatusServiceUnavailable, probe{Status: "not ready",
				Reason: fmt.Sprintf("migrations not applied: schema %d of %d", sc.Applied, sc.Embedded)})
		default:
			answerProbe(w, r, d, http.StatusOK, probe{Status: "ready"})
		}
	})
}

// answerProbe writes p as JSON when asked for, else as "status" or
// "status: reason" on a line.
func answerProbe(w http.ResponseWriter, r *http.Request, d Deps, status int, p probe) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Vary", "Accept")
	if !acceptsJSON(r) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		line := p.Status
		if p.Reason != "" {
			line = p.Reason
		}
		_, _ = w.Write([]byte(line + "\n"))
		return
	}
	b := d.build()
	p.Version, p.Commit = b.Version, b.Commit
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(p)
}

// acceptsJSON says the Accept header names application/json itself; a
// browser's */* keeps the text answer a person reads.
func acceptsJSON(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			if t, _, err := mime.ParseMediaType(part); err == nil && t == "application/json" {
				return true
			}
		}
	}
	return false
}

// handleProbeOptions says what a probe answers, without asking the
// database.
func handleProbeOptions() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
	})
}
