package handlers

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/mangabookmark/mangabookmark/internal/metrics"
	"github.com/mangabookmark/mangabookmark/store"
)

// requestLog writes one line per request and counts it for /metrics. Both
// name the route pattern, never the raw path or query: a path may carry a
// one-time sign-in token and a query an OAuth code, and a metric's label
// set must stay bounded. The statements the line says are the ones the
// metric counts: one StatementLog per request.
func requestLog(log *slog.Logger, m *metrics.HTTP) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ctx, sql := store.WithStatementLog(r.Context())
			r = r.WithContext(ctx)
			rec := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			defer func() {
				if p := recover(); p != nil {
					log.Error("handler panicked", "method", r.Method, "route", routePattern(r), "panic", p)
					if rec.Status() == 0 {
						toMessageSlot(rec, r)
						http.Error(rec, "Something went wrong.", http.StatusInternalServerError)
					}
				}
				n, trips, took := sql.Read()
				route, d := routePattern(r), time.Since(start)
				log.Info("request", "method", r.Method, "route", route, "status", rec.Status(), "duration", d.Round(time.Microsecond),
					"statements", n, "round_trips", trips, "sql", took.Round(time.Microsecond))
				m.Request(route, r.Method, rec.Status(), d, n)
			}()
			next.ServeHTTP(rec, r)
		})
	}
}

func routePattern(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
		return rc.RoutePattern()
	}
	return "unmatched"
}

// headAsGet routes HEAD as GET, so HEAD works wherever GET does (pages,
// assets, covers, the userscript, the API's reads); the server drops the
// body. chi's middleware.GetHead asks the router whether a HEAD route
// exists first, and the router says yes for a mounted sub-router's root
// ("/admin/"), which then answered 405; no route here is HEAD-only.
func headAsGet(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rc := chi.RouteContext(r.Context()); rc != nil && r.Method == http.MethodHead {
			rc.RouteMethod = http.MethodGet
		}
		next.ServeHTTP(w, r)
	})
}

// dbDeadline bounds each request's database work (DATABASE_REQUEST_TIMEOUT):
// the request's context ends after d, the store's statements end with it,
// and the handler answers 503 with Unavailable (failStore). Without it a
// frozen database would hold every request, and requests would pile up.
func dbDeadline(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// securityHeaders sets the headers every response carries.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		// img-src 'self': covers are served from our own origin, so a
		// Reader's browser never fetches anything from a Site.
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
		// Every page depends on who is signed in; the static handler
		// replaces this for its content-hashed files.
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// csrf rejects cross-origin state changes: Go's CrossOriginProtection
// (Sec-Fetch-Site, then Origin against Host) first, then, where the public
// address is known, an Origin that differs from it in scheme, host or port
// (the standard check compares hosts only, so an https page could post to
// the http server). The userscript API authenticates with a bearer token,
// not a cookie, and is called from the Sites' pages, so it is outside both.
func csrf(log *slog.Logger, publicBaseURL string) func(http.Handler) http.Handler {
	deny := func(w http.ResponseWriter, r *http.Request) {
		// Routing has not run yet, so there is no pattern: log the first path
		// segment only (the rest of /login/{token} is a sign-in secret).
		log.Warn("cross-origin request refused", "method", r.Method, "route", firstSegment(r.URL.Path),
			"sec_fetch_site", r.Header.Get("Sec-Fetch-Site"), "origin", r.Header.Get("Origin"))
		http.Error(w, "Cross-origin request refused.", http.StatusForbidden)
	}
	cop := http.NewCrossOriginProtection()
	cop.AddInsecureBypassPattern(apiPrefix)
	cop.SetDenyHandler(http.HandlerFunc(deny))
	public := origin(publicBaseURL)
	return func(next http.Handler) http.Handler {
		whole := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o := r.Header.Get("Origin")
			if public != "" && o != "" && !safeMethod(r.Method) && !strings.HasPrefix(r.URL.Path, apiPrefix) && origin(o) != public {
				deny(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
		return cop.Handler(whole)
	}
}

// apiPrefix is the userscript API's subtree, outside the cross-origin checks.
const apiPrefix = "/api/"

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// origin is the scheme://host:port of an absolute http(s) address, with the
// scheme's default port written out and the host in lower case; "" when s
// is not one.
func origin(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// firstSegment is "/login/…" for "/login/abc": enough to say what was refused.
func firstSegment(p string) string {
	if i := strings.IndexByte(strings.TrimPrefix(p, "/"), '/'); i >= 0 {
		return p[:i+1] + "/…"
	}
	return p
}
