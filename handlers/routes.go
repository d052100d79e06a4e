package handlers

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/mangabookmark/mangabookmark/static"
)

// NewServer builds the whole HTTP surface. It starts nothing.
func NewServer(d Deps) http.Handler { return Routes(d) }

// Routes is NewServer's router with its type showing, so a test can walk
// the route table (chi.Walk) and prove every route is gated.
func Routes(d Deps) chi.Router {
	a := newAuth(d)
	r := chi.NewRouter()
	r.Use(requestLog(d.Logger, d.Metrics), securityHeaders, checkInput, csrf(d.Logger, d.PublicBaseURL), dbDeadline(d.requestTimeout()), headAsGet)
	// The error page names who is signed in, so it reads the session too.
	r.NotFound(a.loadViewer(handleNotFound(d)).ServeHTTP)
	api := apiRoutes(d, a.guild)
	r.MethodNotAllowed(methodNotAllowed(d, r, a, api))

	// Neither depends on who asks: no session lookup (a database read) for
	// the probes or for each asset of every page.
	// A monitor may probe with HEAD (headAsGet) or OPTIONS.
	r.Method(http.MethodGet, "/healthz", handleHealthz(d))
	r.Method(http.MethodOptions, "/healthz", handleProbeOptions())
	r.Method(http.MethodGet, "/readyz", handleReadyz(d))
	r.Method(http.MethodOptions, "/readyz", handleProbeOptions())
	r.Method(http.MethodGet, "/static/*", static.Handler())
	r.Method(http.MethodGet, "/sw.js", handleServiceWorker())
	r.Method(http.MethodGet, "/userscript/mangabookmark.user.js", handleUserscript(d, false))
	r.Method(http.MethodGet, "/userscript/mangabookmark.meta.js", handleUserscript(d, true))
	// Prometheus' scrape: its own bearer token, no session (README, Metrics).
	if d.MetricsHandler != nil {
		r.Method(http.MethodGet, "/metrics", d.MetricsHandler)
	}
	// The token API reads no session: outside the cookie group on purpose.
	r.Mount(apiV1, api)
	// A Reader's feed reads no session either: its secret is its credential.
	r.Method(http.MethodGet, "/feeds/{secret}.atom", handleFeed(d))

	r.Group(func(r chi.Router) {
		r.Use(a.loadViewer)
		r.Method(http.MethodGet, "/login", a.handleLoginPage())
		r.Method(http.MethodGet, "/login/discord", a.handleDiscordStart())
		r.Method(http.MethodGet, "/auth/discord/callback", a.handleDiscordCallback())
		r.Method(http.MethodGet, "/login/{token}", a.handleLinkPage())
		r.Method(http.MethodPost, "/login/{token}", a.handleLinkSignIn())
		r.Method(http.MethodPost, "/logout", a.handleLogout())

		r.Group(func(r chi.Router) {
			r.Use(a.requireReader)
			readerRoutes(r, d)
		})
		r.Route("/admin", func(r chi.Router) {
			r.Use(a.requireOwner)
			adminRoutes(r, d)
		})
	})
	return r
}

// readerRoutes are a signed-in Reader's pages and writes (the owner is a
// Reader too).
func readerRoutes(r chi.Router, d Deps) {
	r.Method(http.MethodGet, "/", handleHome(d))
	r.Method(http.MethodPost, "/", handleAddBookmarks(d))
	r.Method(http.MethodGet, "/bookmarks/export.json", handleExport(d, exportJSON))
	r.Method(http.MethodGet, "/bookmarks/export.csv", handleExport(d, exportCSV))
	r.Method(http.MethodPost, "/bookmarks/import", handleImport(d))
	r.Method(http.MethodPost, "/bookmarks/{site}/{id}/progress", handleSetProgress(d))
	r.Method(http.MethodPost, "/bookmarks/{site}/{id}/caught-up", handleCaughtUp(d))
	r.Method(http.MethodPost, "/bookmarks/{site}/{id}/remove", handleRemoveBookmark(d))
	r.Method(http.MethodPost, "/bookmarks/{site}/{id}/restore", handleRestoreBookmark(d))
	r.Method(http.MethodGet, "/tokens", handleTokens(d))
	r.Method(http.MethodPost, "/tokens", handleCreateToken(d))
	r.Method(http.MethodPost, "/tokens/{id}/revoke", handleRevokeToken(d))
	r.Method(http.MethodGet, "/settings", handleSettings(d))
	r.Method(http.MethodPost, "/settings", handleSaveSettings(d))
	r.Method(http.MethodPost, "/settings/feed/new", handleNewFeedAddress(d))
	r.Method(http.MethodPost, "/settings/feed/off", handleFeedOff(d))
	r.Method(http.MethodGet, "/covers/{site}/{id}", handleCover(d))
	r.Method(http.MethodGet, "/push/key", handlePushKey(d))
	r.Method(http.MethodPost, "/push/subscriptions", handleSubscribePush(d))
	r.Method(http.MethodPost, "/push/subscriptions/delete", handleUnsubscribePush(d))
}

// adminRoutes are the owner's surface under /admin, behind requireOwner.
func adminRoutes(r chi.Router, d Deps) {
	r.Method(http.MethodGet, "/", handleAdminLanding(d))
	r.Method(http.MethodGet, "/series", handleAdminSeriesList(d))
	r.Method(http.MethodPost, "/series", handleAdminAddSeries(d))
	r.Method(http.MethodPost, "/series/bulk", handleBulk(d))
	r.Method(http.MethodGet, "/series/{site}/{id}", handleAdminSeriesDetail(d))
	r.Method(http.MethodPost, "/series/{site}/{id}/finish", handleFinish(d))
	r.Method(http.MethodPost, "/series/{site}/{id}/unfinish", handleUnfinish(d))
	r.Method(http.MethodPost, "/series/{site}/{id}/latest", handleCorrectLatest(d))
	r.Method(http.MethodPost, "/series/{site}/{id}/clear-attribution", handleClearAttribution(d))
	r.Method(http.MethodPost, "/series/{site}/{id}/poll", handleForceSeriesPoll(d))
	r.Method(http.MethodPost, "/series/{site}/{id}/delete", handleDeleteSeries(d))
	r.Method(http.MethodPost, "/series/{site}/{id}/address", handleCorrectAddress(d))
	r.Method(http.MethodPost, "/series/{site}/{id}/test-read", handleTestRead(d))
	r.Method(http.MethodGet, "/series/{site}/{id}/poll-state", handleAdminPollState(d))
	r.Method(http.MethodGet, "/lanes", handleAdminLanes(d))
	r.Method(http.MethodGet, "/lanes/{site}", handleAdminLaneRow(d))
	r.Method(http.MethodPost, "/lanes/{site}/poll", handleForceLanePoll(d))
	r.Method(http.MethodPost, "/lanes/{site}/pause", handlePauseLane(d))
	r.Method(http.MethodPost, "/lanes/{site}/resume", handleResumeLane(d))
	r.Method(http.MethodGet, "/readers", handleAdminReaders(d))
	r.Method(http.MethodPost, "/readers", handleCreateReaderLink(d))
	r.Method(http.MethodPost, "/readers/{id}/signout", handleSignOutReader(d))
	r.Method(http.MethodPost, "/readers/{id}/link", handleNewReaderLink(d))
	r.Method(http.MethodPost, "/readers/{id}/remove", handleRemoveReader(d))
	if d.Demo != nil {
		r.Method(http.MethodGet, "/demo/notices", handleDemoNotices(d))
	}
}
