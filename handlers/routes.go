package handlers

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/mangabookmark/mangabookmark/static"
)

// NewServer builds the whole HTTP surface. It starts nothing.
func NewServer(d Deps) http.Handler {
	a := newAuth(d)
	r := chi.NewRouter()
	r.Use(requestLog(d.Logger), securityHeaders, csrf(d.Logger), a.loadViewer)
	r.NotFound(handleNotFound(d).ServeHTTP)

	r.Method(http.MethodGet, "/healthz", handleHealthz(d))
	r.Method(http.MethodGet, "/static/*", static.Handler())

	r.Method(http.MethodGet, "/login", a.handleLoginPage())
	r.Method(http.MethodGet, "/login/discord", a.handleDiscordStart())
	r.Method(http.MethodGet, "/auth/discord/callback", a.handleDiscordCallback())
	r.Method(http.MethodGet, "/login/{token}", a.handleLinkPage())
	r.Method(http.MethodPost, "/login/{token}", a.handleLinkSignIn())
	r.Method(http.MethodPost, "/logout", a.handleLogout())

	r.Group(func(r chi.Router) {
		r.Use(a.requireReader)
		r.Method(http.MethodGet, "/", handleHome(d))
	})

	r.Route("/admin", func(r chi.Router) {
		r.Use(a.requireOwner)
		r.Method(http.MethodGet, "/", handleAdminLanding(d))
	})
	return r
}
