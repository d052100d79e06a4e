package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
)

// maxSegment caps one path segment and maxQueryValue one query value (a
// cursor such as after=site:id): far past any Site name, Series id or
// token, short of anything that could cost the database work.
const (
	maxSegment    = 256
	maxQueryValue = 1024
)

// checkInput refuses, before routing and so before any SQL, a path or query
// whose bytes no route can mean: not valid UTF-8, holding a NUL, or longer
// than the caps. PostgreSQL refuses such text
// itself (SQLSTATE 22021), which would otherwise surface as a 500. Under
// the token API the refusal is the API's JSON, word bad_request.
func checkInput(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := badInput(r.URL); why != "" {
			if strings.HasPrefix(r.URL.Path, apiPrefix) {
				writeJSON(w, http.StatusBadRequest, apiErr(http.StatusBadRequest, apiBadRequest, why).body())
				return
			}
			toMessageSlot(w, r)
			http.Error(w, why, http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// badInput is the sentence refusing u, or "" when every byte is acceptable.
func badInput(u *url.URL) string {
	for _, seg := range strings.Split(u.Path, "/") {
		if !cleanText(seg) {
			return "This address holds bytes no page here takes (invalid UTF-8 or a NUL)."
		}
		if len(seg) > maxSegment {
			return "This address is too long for any page here."
		}
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "This address's query could not be read."
	}
	for k, vs := range q {
		for _, v := range append(vs, k) {
			if !cleanText(v) {
				return "This address's query holds bytes no page here takes (invalid UTF-8 or a NUL)."
			}
			if len(v) > maxQueryValue {
				return "This address's query is too long for any page here."
			}
		}
	}
	return ""
}

// cleanText reports whether s is valid UTF-8 without a NUL: the text
// PostgreSQL takes.
func cleanText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// methods are the request methods a route can be asked for.
var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions}

// allowed lists the methods routes answers at path; HEAD wherever GET is
// (headAsGet routes it there).
func allowed(routes chi.Routes, path string) []string {
	var out []string
	for _, m := range methods {
		asked := m
		if m == http.MethodHead {
			asked = http.MethodGet
		}
		if routes.Match(chi.NewRouteContext(), asked, path) {
			out = append(out, m)
		}
	}
	return out
}

// methodNotAllowed answers a method a route does not take: 405, an Allow
// header and a sentence, and only after the route's own gate, so an
// anonymous visitor learns nothing about the owner's routes. chi calls it
// for any method it does not know (FOO) before it looks at the path, so a
// path no route serves is the 404 it would be for GET, and a path under the
// token API is handed to the API, whose answers are JSON.
func methodNotAllowed(d Deps, routes chi.Routes, a *auth, api http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, apiV1); ok && (rest == "" || rest[0] == '/') {
			if rc := chi.RouteContext(r.Context()); rc != nil {
				rc.RoutePath = "/" + strings.TrimPrefix(rest, "/")
			}
			api.ServeHTTP(w, r)
			return
		}
		allow := allowed(routes, r.URL.Path)
		answer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			fail(w, r, d.Logger, http.StatusMethodNotAllowed,
				"This address does not take a "+r.Method+" request; it takes "+strings.Join(allow, " or ")+".")
		})
		if len(allow) == 0 {
			answer = handleNotFound(d).ServeHTTP
		}
		gateFor(a, r.URL.Path)(answer).ServeHTTP(w, r)
	}
}

// gateFor is the gate in front of the routes at path: the owner's under
// /admin, a Reader's for the Reader pages, the session read alone
// elsewhere (the error page names who is signed in).
func gateFor(a *auth, path string) func(http.Handler) http.Handler {
	switch {
	case path == "/admin" || strings.HasPrefix(path, "/admin/"):
		return func(h http.Handler) http.Handler { return a.loadViewer(a.requireOwner(h)) }
	case path == "/" || path == "/tokens" || strings.HasPrefix(path, "/tokens/") || strings.HasPrefix(path, "/bookmarks/") ||
		path == "/settings" || strings.HasPrefix(path, "/settings/") || strings.HasPrefix(path, "/push/"):
		return func(h http.Handler) http.Handler { return a.loadViewer(a.requireReader(h)) }
	case path == "/healthz" || path == "/readyz" || path == "/sw.js" || strings.HasPrefix(path, "/static/") || strings.HasPrefix(path, "/userscript/"):
		return func(h http.Handler) http.Handler { return h }
	}
	return a.loadViewer
}
