package handlers

import (
	"errors"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
)

// maxFormBody bounds a control's form: a few short fields.
const maxFormBody = 16 << 10

// maxFormField caps one field's value and maxFormName its name: far past
// any name, number or list address a page sends, as maxQueryValue is for a
// query. A paste (the add box) is bounded by its body instead.
const (
	maxFormField = 4 << 10
	maxFormName  = 64
)

// formRefusal is why a form was not taken: the answer's status and a
// sentence naming the field when one is at fault.
type formRefusal struct {
	status   int
	sentence string
}

// limitedForm parses the request's form, its body cut at limit bytes so a
// huge post cannot hold the server, and checks every field the way
// checkInput checks an address: PostgreSQL refuses text that is not UTF-8
// or holds a NUL (SQLSTATE 22021), which would otherwise surface as a 500
// from whichever handler first stored the field. Only a body over limit is
// 413; a form that cannot be read is 400, and a body of another type 415
// (ParseForm would leave it unread, and the handler act as if no field were
// sent). Fields named in long (a paste) may be as long as the body.
func limitedForm(w http.ResponseWriter, r *http.Request, limit int64, long ...string) *formRefusal {
	if !formBody(r) {
		return &formRefusal{http.StatusUnsupportedMediaType, "That is not a form as a page here sends it (application/x-www-form-urlencoded). Nothing was changed."}
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &formRefusal{http.StatusRequestEntityTooLarge, "That form is too large for any page here. Nothing was changed."}
		}
		return &formRefusal{http.StatusBadRequest, "That form could not be read. Nothing was changed."}
	}
	return badForm(r.PostForm, long)
}

// formBody reports whether r has no body or a URL-encoded form, the one
// kind a page here posts (htmx too).
func formBody(r *http.Request) bool {
	if r.ContentLength == 0 {
		return true
	}
	t, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && t == "application/x-www-form-urlencoded"
}

// badForm is the refusal of the first bad field of f (in name order, so the
// answer does not change from one try to the next), or nil.
func badForm(f url.Values, long []string) *formRefusal {
	for _, k := range slices.Sorted(maps.Keys(f)) {
		if !cleanText(k) || len(k) > maxFormName {
			// Not echoed: the name itself is what is wrong.
			return &formRefusal{http.StatusBadRequest, "A field name in this form holds bytes no page here takes (invalid UTF-8 or a NUL), or is too long. Nothing was changed."}
		}
		for _, v := range f[k] {
			if !cleanText(v) {
				return &formRefusal{http.StatusBadRequest, "The field " + k + " holds bytes no page here takes (invalid UTF-8 or a NUL). Nothing was changed."}
			}
			if len(v) > maxFormField && !slices.Contains(long, k) {
				return &formRefusal{http.StatusBadRequest, "The field " + k + " is too long: at most " + strconv.Itoa(maxFormField) + " bytes. Nothing was changed."}
			}
		}
	}
	return nil
}

// readForm is limitedForm for a page's form: one refused is answered here
// (400 or 413 with the sentence), and readForm reports false.
func readForm(d Deps, w http.ResponseWriter, r *http.Request, limit int64) bool {
	if no := limitedForm(w, r, limit); no != nil {
		fail(w, r, d.Logger, no.status, no.sentence)
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
	// moved is the Series' new id when the change gave it one (an address
	// correction that merged it): the answer goes to that Series' page.
	moved string
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
