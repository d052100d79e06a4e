package handlers

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/mangabookmark/mangabookmark/static"
	"github.com/mangabookmark/mangabookmark/store"
)

// The token API under /api/v1 (README, "The Reader's side"). It reads no
// cookie and answers no CORS: the userscript calls it through its manager's
// GM.xmlHttpRequest, which needs neither, and a bearer token is the only way
// in. Origin and Sec-Fetch-* are ignored (managers send them inconsistently),
// which is why the cross-origin check exempts /api/. The contract is
// docs/adr/0008.

// apiWord is the stable word an API error answers with; the userscript
// switches on it, so a word never changes once released.
type apiWord string

// The API's error words (README's API table).
const (
	apiMalformedJSON   apiWord = "malformed_json"    // 400: not one JSON object of the right shape
	apiUnknownField    apiWord = "unknown_field"     // 400: a key the endpoint does not take
	apiNotAChapter     apiWord = "not_a_chapter"     // 400: a number that is not a chapter number
	apiUnknownSite     apiWord = "unknown_site"      // 400: an address of no supported Site
	apiBadRequest      apiWord = "bad_request"       // 400: a required field or header is missing or wrong
	apiTooManyChapters apiWord = "too_many_chapters" // 400: a Sighting of more than maxSighting numbers
	apiTokenMissing    apiWord = "token_missing"     // 401: no bearer token
	apiTokenInvalid    apiWord = "token_invalid"     // 401: a token never issued, or revoked
	apiNotBookmarked   apiWord = "not_bookmarked"    // 404: Progress on a Series the Reader does not bookmark
	apiNotFound        apiWord = "not_found"         // 404: no such API path
	apiMethod          apiWord = "method_not_allowed"
	apiKeyInFlight     apiWord = "idempotency_key_in_flight" // 409: the first request with this key is still running
	apiTooLarge        apiWord = "body_too_large"            // 413: a body over maxAPIBody
	apiKeyReused       apiWord = "idempotency_key_reused"    // 422: the key was used with another body
	apiImplausible     apiWord = "implausible"               // 422: a Sighting above the Sighting bound
	apiChapterMismatch apiWord = "chapter_mismatch"          // 422: the chapter address names another chapter than "chapter"
	apiRateLimited     apiWord = "rate_limited"              // 429: over apiWritesPerMinute
	apiInternal        apiWord = "internal"                  // 500
	apiUnavailable     apiWord = "unavailable"               // 503: the database is down or too slow (store.Unavailable)
)

// apiError is an answer other than success: its status, word and sentence,
// and the Retry-After it carries ("" for none).
type apiError struct {
	status     int
	word       apiWord
	message    string
	retryAfter string
}

func apiErr(status int, word apiWord, message string) *apiError {
	return &apiError{status: status, word: word, message: message}
}

// apiToken prefixes every token, so a leaked one is recognisable to secret
// scanners and to the Reader who finds it in a file.
const apiTokenPrefix = "mbk_"

// NewAPIToken makes a userscript token (256 random bits) and the keyed hash
// under which it is stored; the token itself is shown once and never kept.
func NewAPIToken(tokenKey []byte) (token string, hash []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token = apiTokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return token, apiTokenHash(tokenKey, token)
}

// apiTokenHash is HMAC-SHA256 under TOKEN_KEY: a copy of the tokens table
// without the key cannot be turned back into working tokens.
func apiTokenHash(tokenKey []byte, token string) []byte {
	m := hmac.New(sha256.New, tokenKey)
	m.Write([]byte(token))
	return m.Sum(nil)
}

type apiTokenKey struct{}

// tokenFrom is the token the request authenticated with (set by bearer).
func tokenFrom(ctx context.Context) store.TokenUse {
	t, _ := ctx.Value(apiTokenKey{}).(store.TokenUse)
	return t
}

// apiV1 is where the token API is mounted.
const apiV1 = "/api/v1"

// apiRoutes is the /api/v1 sub-router.
func apiRoutes(d Deps, guild *guildChecker) http.Handler {
	if d.UserscriptVersion == "" {
		d.UserscriptVersion = static.UserscriptVersion()
	}
	api := &apiServer{d: d, limit: newRateLimiter(apiWritesPerMinute), guild: guild}
	r := chi.NewRouter()
	r.Use(api.userscriptVersion, api.bearer)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		api.fail(w, r, apiErr(http.StatusNotFound, apiNotFound, "There is no API path at this address."))
	})
	// Also called for a method chi does not know, on any path: one no route
	// serves is the 404 it would be for GET.
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		var allow []string
		if rc := chi.RouteContext(req.Context()); rc != nil {
			allow = allowed(r, rc.RoutePath)
		}
		if len(allow) == 0 {
			api.fail(w, req, apiErr(http.StatusNotFound, apiNotFound, "There is no API path at this address."))
			return
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		api.fail(w, req, apiErr(http.StatusMethodNotAllowed, apiMethod, "This API path does not take "+req.Method+"."))
	})
	r.Get("/me", api.handleMe)
	r.Get("/bookmarks", api.handleBookmarks)
	r.Get("/bookmarks/export.json", api.handleExport)
	r.Get("/lookup", api.handleLookup)
	r.Post("/progress", api.write(api.progress))
	r.Post("/sightings", api.write(api.sightings))
	return r
}

// apiServer holds what the API handlers share.
type apiServer struct {
	d     Deps
	limit *rateLimiter
	guild *guildChecker // nil without Discord sign-in
}

// bearer authenticates every API request by its token alone, on every
// request: a revoked token is deleted, so it answers 401 on its next use.
func (api *apiServer) bearer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		tok = strings.TrimSpace(tok)
		if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mangabookmark"`)
			api.fail(w, r, apiErr(http.StatusUnauthorized, apiTokenMissing, "Send a userscript token as Authorization: Bearer <token>; create one on the Tokens page."))
			return
		}
		use, err := api.d.Store.ReaderByToken(r.Context(), apiTokenHash(api.d.TokenKey, tok), api.d.now())
		// A userscript is a Reader using the product too: a due guild
		// re-check runs here as on a page (CONTEXT.md, Guild re-check).
		if err == nil && use.GuildCheckDue && api.guild.check(r.Context(), use.ReaderID) == guildGone {
			err = store.ErrNotFound
		}
		if errors.Is(err, store.ErrNotFound) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mangabookmark", error="invalid_token"`)
			api.fail(w, r, apiErr(http.StatusUnauthorized, apiTokenInvalid, "This token is not known here: it was revoked or never issued. Create a new one on the Tokens page."))
			return
		}
		if err != nil {
			api.internal(w, r, "token lookup", err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), apiTokenKey{}, use)))
	})
}

// reply writes a JSON answer.
func (api *apiServer) reply(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal","message":"The answer could not be written."}`)
	}
	writeJSON(w, status, b)
}

func writeJSON(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	_, _ = w.Write([]byte("\n"))
}

type apiErrorBody struct {
	Error   apiWord `json:"error"`
	Message string  `json:"message"`
}

func (e *apiError) body() []byte {
	b, _ := json.Marshal(apiErrorBody{Error: e.word, Message: e.message})
	return b
}

// setHeaders sets the headers an error answer carries beside its body.
func (e *apiError) setHeaders(w http.ResponseWriter) {
	if e.retryAfter != "" {
		w.Header().Set("Retry-After", e.retryAfter)
	}
}

// fail answers an API error. One log line per refused request comes from the
// request log (route and status); the word is added at debug level.
func (api *apiServer) fail(w http.ResponseWriter, r *http.Request, e *apiError) {
	api.d.Logger.Debug("api refused", "route", routePattern(r), "error", string(e.word))
	e.setHeaders(w)
	writeJSON(w, e.status, e.body())
}

// internal answers a failure on our side: one log line with the cause (never
// a token: the store's errors do not carry it), and a sentence without it.
func (api *apiServer) internal(w http.ResponseWriter, r *http.Request, what string, err error) {
	api.fail(w, r, api.internalErr(r, what, err))
}

// internalErr is the answer to a failed store call: 503 unavailable with
// Retry-After when the database is down, restarting or slower than the
// request's deadline (store.Unavailable, as the pages' failStore decides),
// so the userscript queues the write and tries again; else 500 internal.
func (api *apiServer) internalErr(r *http.Request, what string, err error) *apiError {
	if store.Unavailable(err) {
		api.d.Logger.Warn("database unavailable", "method", r.Method, "route", routePattern(r), "api", what, "err", err)
		e := apiErr(http.StatusServiceUnavailable, apiUnavailable, "The database is unavailable just now; send the request again after Retry-After seconds.")
		e.retryAfter = unavailableRetryAfter
		return e
	}
	api.d.Logger.Error("api: "+what, "route", routePattern(r), "err", err)
	return apiErr(http.StatusInternalServerError, apiInternal, "Something went wrong on the server; try again later.")
}
