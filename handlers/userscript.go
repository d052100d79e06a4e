package handlers

import (
	"bytes"
	"net/http"
	"time"

	"github.com/mangabookmark/mangabookmark/static"
)

// handleUserscript serves the userscript, or its metadata block alone (what
// managers fetch to check for an update), filled from PUBLIC_BASE_URL. The
// address ends in .user.js with no query, which is what makes managers offer
// to install it; revalidation goes by ETag.
func handleUserscript(d Deps, metaOnly bool) http.Handler {
	us, err := static.RenderUserscript(d.PublicBaseURL)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err != nil {
			d.Logger.Error("userscript", "err", err)
			http.Error(w, "The userscript cannot be served: the server's public address is not usable.", http.StatusInternalServerError)
			return
		}
		body, tag := us.Script, us.ScriptETag
		if metaOnly {
			body, tag = us.Meta, us.MetaETag
		}
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("ETag", tag)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
	})
}
