// Package static serves the embedded assets (htmx, vendored from its npm
// package, the stylesheet and the admin script) under content-hashed URLs,
// so browsers may cache them for a year and a new build is never served
// stale.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
)

//go:embed vendor css js img
var files embed.FS

// HTMX is the vendored htmx build (npm package htmx.org).
const HTMX = "vendor/htmx-2.0.11.min.js"

// CSS is the one stylesheet.
const CSS = "css/app.css"

// Favicon is the tab icon: a bookmark.
const Favicon = "img/favicon.svg"

// AdminJS keeps the filter form in step with the address after htmx
// restores a page from history.
const AdminJS = "js/admin.js"

// PushJS is the Web Push control on /settings (components.PushSubscribe).
const PushJS = "js/push.js"

// ServiceWorker is /sw.js. It is not a hashed asset: a service worker's
// address is its identity, and served from the site's root its scope is the
// whole site, so a new build updates it in place.
//
//go:embed sw.js
var ServiceWorker []byte

// ReaderJS is the copy button of a token, a sign-in link or a feed address
// shown once, and the browser's time zone on /settings.
const ReaderJS = "js/reader.js"

var hashes = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		m[p] = hex.EncodeToString(sum[:])[:12]
		return nil
	})
	return m
})

// URL is the cache-busting address of an embedded file: /static/<hash>/<name>.
func URL(name string) string {
	return "/static/" + hashes()[name] + "/" + name
}

// Handler serves /static/<hash>/<name>. A current hash is cached as
// immutable; an old or missing one still serves the file but is revalidated.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest := strings.TrimPrefix(r.URL.Path, "/static/")
		hash, name, ok := strings.Cut(rest, "/")
		name = path.Clean(name)
		want, known := hashes()[name]
		if !ok || !known {
			http.NotFound(w, r)
			return
		}
		if hash == want {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		http.ServeFileFS(w, r, files, name)
	})
}
