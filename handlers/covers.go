package handlers

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// Covers are served from our own origin (a Reader's browser never talks to a
// Site) at a stable address, /covers/{site}/{id}. Pages add ?v= naming the
// stored image's source, so a page's link changes exactly when the image
// does and the browser may keep it for good.

// coverVersion names one stored cover: a short hash of the address it was
// fetched from.
func coverVersion(sourceURL string) string {
	sum := sha256.Sum256([]byte(sourceURL))
	return hex.EncodeToString(sum[:6])
}

// coverSrc is the address a page shows a Series' cover at, "" while no image
// is stored (the page then draws the title's initial).
func coverSrc(site, id, coverTried string) string {
	if coverTried == "" {
		return ""
	}
	return coverPath(site, id) + "?v=" + coverVersion(coverTried)
}

// handleCover serves a stored cover with its ETag; without one, the drawn
// placeholder, so even a stale page never shows a broken image.
func handleCover(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site, id := chi.URLParam(r, "site"), chi.URLParam(r, "id")
		if !word.KnownSite(site) {
			// No Series of an unknown Site exists: a drawn initial would
			// answer 200 for any address.
			handleNotFound(d).ServeHTTP(w, r)
			return
		}
		c, err := d.Store.GetCover(r.Context(), site, id)
		if errors.Is(err, store.ErrNotFound) {
			servePlaceholder(w, r, d, site, id)
			return
		}
		if err != nil {
			d.Logger.Error("cover", "err", err)
			servePlaceholder(w, r, d, site, id)
			return
		}
		h := w.Header()
		h.Set("ETag", c.ETag)
		if r.URL.Query().Get("v") == coverVersion(c.SourceURL) {
			h.Set("Cache-Control", "private, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "private, no-cache")
		}
		if etagMatches(r.Header.Get("If-None-Match"), c.ETag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", c.ContentType)
		_, _ = w.Write(c.Body)
	})
}

// servePlaceholder draws the title's initial as an SVG the size of a cover.
func servePlaceholder(w http.ResponseWriter, r *http.Request, d Deps, site, id string) {
	title := id
	if s, err := d.Store.GetSeries(r.Context(), site, id); err == nil && s.Title != "" {
		title = s.Title
	}
	h := w.Header()
	h.Set("Content-Type", "image/svg+xml")
	h.Set("Cache-Control", "private, no-cache")
	_, _ = w.Write([]byte(components.CoverPlaceholderSVG(title)))
}
