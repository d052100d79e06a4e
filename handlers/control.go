package handlers

import (
	"errors"
	"net/http"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
)

// maxFormBody bounds a control's form: a few short fields.
const maxFormBody = 16 << 10

// limitedForm parses the request's form, its body cut at limit bytes so a
// huge post cannot hold the server.
func limitedForm(w http.ResponseWriter, r *http.Request, limit int64) error {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	return r.ParseForm()
}

// readForm is limitedForm for a page's form: one that cannot be read (too
// large, malformed) is answered with a 400 here, and readForm reports false.
func readForm(d Deps, w http.ResponseWriter, r *http.Request, limit int64) bool {
	if err := limitedForm(w, r, limit); err != nil {
		fail(w, r, d.Logger, http.StatusBadRequest, "That form could not be read.")
		return false
	}
	return true
}

// controlResult is what a control's act reports, one shape for the Series,
// Lane and row controls. Status 0 means the change was made, and done is
// its sentence. Otherwise nothing was changed (or a step is shown): status
// is the answer's, 404 when the thing is missing, and refusal, when set,
// says why in a sentence.
type controlResult struct {
	done    string
	status  int
	refusal string
	// adjust sets a step or a finding on the Series detail page shown with
	// a non-zero status (the Series controls only; nil for none).
	adjust func(*components.SeriesDetail)
}

// storeResult maps a store error onto a control's answer, for the Series
// controls and the Lane controls alike; done is the sentence when err is nil.
func storeResult(d Deps, what string, err error, done string) controlResult {
	switch {
	case err == nil:
		return controlResult{done: done}
	case errors.Is(err, store.ErrNotFound):
		return controlResult{status: http.StatusNotFound}
	case store.Unavailable(err):
		d.Logger.Warn("database unavailable", "control", what, "err", err)
		return controlResult{status: http.StatusServiceUnavailable, refusal: Unavailable}
	default:
		d.Logger.Error("admin control failed", "control", what, "err", err)
		return controlResult{status: http.StatusInternalServerError, refusal: "That change could not be saved. Nothing was changed; try again."}
	}
}
