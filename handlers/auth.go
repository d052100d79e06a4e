package handlers

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/sessions"
	"golang.org/x/oauth2"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
)

// auth holds the sign-in machinery built once by NewServer.
type auth struct {
	d       Deps
	cookies *sessions.CookieStore
	oauth   *oauth2.Config
	client  *http.Client
	guild   *guildChecker
}

func newAuth(d Deps) *auth {
	secure := false
	if u, err := url.Parse(d.PublicBaseURL); err == nil && u.Scheme == "https" {
		secure = true
	}
	a := &auth{d: d, cookies: newCookieStore(d.SessionKey, secure), client: &http.Client{Timeout: 10 * time.Second}}
	if d.Discord != nil {
		a.oauth = &oauth2.Config{
			ClientID:     d.Discord.ClientID,
			ClientSecret: d.Discord.ClientSecret,
			Endpoint:     d.Discord.Endpoint,
			RedirectURL:  d.PublicBaseURL + "/auth/discord/callback",
			Scopes:       []string{"identify", "guilds"},
		}
	}
	a.guild = newGuildChecker(d, a.oauth, a.client)
	return a
}

// loadViewer puts the signed-in Reader (if any) into the request context.
// A cookie counts only while its epoch is the Reader's current one: signing
// out moves the epoch on, so no copy of the cookie outlives it. It reads the
// database once per request: the not-found page wraps it too, and under
// /admin that page is reached from inside the session routes.
func (a *auth) loadViewer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, loaded := r.Context().Value(viewerKey{}).(components.Viewer); loaded {
			next.ServeHTTP(w, r)
			return
		}
		v := components.Viewer{}
		sess, _ := a.cookies.Get(r, sessionName)
		id, _ := sess.Values["uid"].(string)
		name, _ := sess.Values["name"].(string)
		epoch, _ := sess.Values["epoch"].(int64)
		if id != "" {
			current, err := a.d.Store.SeenSession(r.Context(), id, a.d.now())
			switch {
			case err != nil && !errors.Is(err, store.ErrNotFound):
				// Not knowing is not "signed out": answering as anonymous would
				// send the owner to sign in (and an htmx form away from what was
				// typed) while the database is merely away. The cookie stays.
				failStore(w, r, a.d.Logger, err, "Your sign-in could not be checked. Try again.", "session check failed")
				return
			case err == nil && current.Epoch == epoch:
				// A due guild re-check runs here, on the Reader's first page
				// after a day (CONTEXT.md, Guild re-check).
				if !current.GuildCheckDue || !a.guild.check(r.Context(), id).endsSessions() {
					v = components.Viewer{ID: id, Name: name, IsOwner: id == a.d.OwnerID}
					if v.IsOwner {
						v.Build = a.d.build().String()
					}
				}
			}
		}
		next.ServeHTTP(w, r.WithContext(withViewer(r.Context(), v)))
	})
}

// requireReader sends anonymous visitors to sign in. Only a page read is
// remembered as where to come back to: a control's address answers no GET.
// An htmx request (a session that expired under an open page) gets a 401
// with HX-Redirect, because htmx would follow a 303 itself and swap the
// sign-in page into the list region.
func (a *auth) requireReader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if viewerFrom(r.Context()).ID == "" {
			back := "/"
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				back = r.URL.RequestURI()
			}
			to := "/login?next=" + url.QueryEscape(back)
			if r.Header.Get("HX-Request") == "true" {
				w.Header().Set("HX-Redirect", to)
				fail(w, r, a.d.Logger, http.StatusUnauthorized, "Your sign-in has ended. Sign in again.")
				return
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireOwner is the owner gate on every /admin route: anonymous → sign in,
// signed in but not the owner → 403.
func (a *auth) requireOwner(next http.Handler) http.Handler {
	return a.requireReader(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !viewerFrom(r.Context()).IsOwner {
			fail(w, r, a.d.Logger, http.StatusForbidden, "This page is for the owner of this server.")
			return
		}
		next.ServeHTTP(w, r)
	}))
}

// signIn records the Reader and gives this browser a session. A Discord
// sign-in passes its OAuth grant: the refresh token is kept (sealed) and the
// next guild re-check set before the cookie is given, so no Discord Reader
// holds a session the re-check cannot reach (CONTEXT.md, Guild re-check). A
// link sign-in passes nil and keeps none.
func (a *auth) signIn(w http.ResponseWriter, r *http.Request, rd store.Reader, grant *oauth2.Token) error {
	if err := a.d.Store.UpsertReader(r.Context(), rd, a.d.now()); err != nil {
		return err
	}
	if grant != nil {
		sealed := sealGrant(a.d.TokenKey, rd.DiscordID, grant.RefreshToken)
		if err := a.d.Store.SaveDiscordGrant(r.Context(), rd.DiscordID, sealed, a.d.now().Add(GuildCheckEvery)); err != nil {
			return err
		}
	}
	epoch, err := a.d.Store.SessionEpoch(r.Context(), rd.DiscordID)
	if err != nil {
		return err
	}
	sess, _ := a.cookies.Get(r, sessionName)
	sess.Values["uid"] = rd.DiscordID
	sess.Values["name"] = rd.Name
	sess.Values["epoch"] = epoch
	return sess.Save(r, w)
}

func (a *auth) handleLoginPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		render(w, r, a.d.Logger, http.StatusOK, components.LoginPage(a.oauth != nil, url.QueryEscape(safeNext(r.URL.Query().Get("next"))), ""))
	})
}

// handleLogout ends every session of the signed-in Reader (on every
// device), then expires this browser's cookie.
func (a *auth) handleLogout() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(a.d, w, r, maxFormBody) {
			return
		}
		if v := viewerFrom(r.Context()); v.ID != "" {
			if err := a.d.Store.EndSessions(r.Context(), v.ID); err != nil {
				failStore(w, r, a.d.Logger, err, "Signing out did not complete. Try again.", "sign-out: end sessions")
				return
			}
		}
		sess, _ := a.cookies.Get(r, sessionName)
		sess.Options.MaxAge = -1
		_ = sess.Save(r, w)
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	})
}

// --- Discord OAuth2 (authorization code with state and PKCE) ---

func (a *auth) handleDiscordStart() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.oauth == nil {
			fail(w, r, a.d.Logger, http.StatusNotFound, "Discord sign-in is not configured on this server.")
			return
		}
		state, verifier := randomToken(), oauth2.GenerateVerifier()
		sess, _ := a.cookies.New(r, oauthName)
		sess.Options = a.oauthCookie(600)
		sess.Values["state"], sess.Values["verifier"], sess.Values["next"] = state, verifier, safeNext(r.URL.Query().Get("next"))
		if err := sess.Save(r, w); err != nil {
			failStore(w, r, a.d.Logger, err, "Sign-in could not start. Try again.", "oauth start: save state")
			return
		}
		http.Redirect(w, r, a.oauth.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)), http.StatusFound)
	})
}

// oauthCookie is the sign-in attempt's cookie: sent only to the callback,
// for maxAge seconds (-1 expires it).
func (a *auth) oauthCookie(maxAge int) *sessions.Options {
	return &sessions.Options{Path: "/auth/", MaxAge: maxAge, HttpOnly: true, Secure: a.cookies.Options.Secure, SameSite: http.SameSiteLaxMode}
}

type discordUser struct {
	ID         string `json:"id"`
	Username   string `json:"username"`
	GlobalName string `json:"global_name"`
	Avatar     string `json:"avatar"`
}

func (a *auth) handleDiscordCallback() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log := a.d.Logger
		if a.oauth == nil {
			fail(w, r, log, http.StatusNotFound, "Discord sign-in is not configured on this server.")
			return
		}
		sess, _ := a.cookies.Get(r, oauthName)
		state, _ := sess.Values["state"].(string)
		verifier, _ := sess.Values["verifier"].(string)
		next, _ := sess.Values["next"].(string)
		// Spend the state whatever happens next: it is single use. The
		// expiry must name the cookie's own path, or it is another cookie.
		sess.Options = a.oauthCookie(-1)
		_ = sess.Save(r, w)
		q := r.URL.Query()
		if state == "" || q.Get("state") != state {
			fail(w, r, log, http.StatusBadRequest, "This sign-in attempt expired or did not start here. Start again from the sign-in page.")
			return
		}
		if q.Get("error") != "" || q.Get("code") == "" {
			fail(w, r, log, http.StatusBadRequest, "Discord did not complete the sign-in. Start again from the sign-in page.")
			return
		}
		// Discord's calls have their own client timeout; the request's
		// database deadline starts again once they are done (below).
		ctx := context.WithValue(context.WithoutCancel(r.Context()), oauth2.HTTPClient, a.client)
		reader, grant, status, msg := a.discordMember(ctx, q.Get("code"), verifier)
		if status != 0 {
			fail(w, r, log, status, msg)
			return
		}
		dbCtx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), a.d.requestTimeout())
		defer cancel()
		if err := a.signIn(w, r.WithContext(dbCtx), reader, grant); err != nil {
			failStore(w, r, log, err, "Sign-in could not be recorded. Try again.", "sign-in: record reader")
			return
		}
		log.Info("signed in", "discord_id", reader.DiscordID, "via", "discord")
		http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
	})
}

// discordGuild is one server of /users/@me/guilds.
type discordGuild struct {
	ID string `json:"id"`
}

// discordMember exchanges the code and asks Discord who signed in and
// whether they are a member of the guild. It answers the Reader and the
// OAuth grant, or a refusal's status and the sentence the page shows
// (status 0: the Reader may sign in).
func (a *auth) discordMember(ctx context.Context, code, verifier string) (store.Reader, *oauth2.Token, int, string) {
	log := a.d.Logger
	tok, err := a.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		log.Warn("oauth: code exchange failed", "err", redactOAuthErr(err))
		return store.Reader{}, nil, http.StatusBadGateway, "Discord did not accept the sign-in. Try again."
	}
	var u discordUser
	if err := discordGet(ctx, a.client, a.d.Discord.APIBase, tok, "/users/@me", &u); err != nil || u.ID == "" {
		log.Warn("oauth: read user failed", "err", err)
		return store.Reader{}, nil, http.StatusBadGateway, "Discord did not say who you are. Try again."
	}
	var guilds []discordGuild
	if err := discordGet(ctx, a.client, a.d.Discord.APIBase, tok, "/users/@me/guilds", &guilds); err != nil {
		log.Warn("oauth: read guilds failed", "err", err)
		return store.Reader{}, nil, http.StatusBadGateway, "Discord did not list your servers. Try again."
	}
	if !slices.ContainsFunc(guilds, func(g discordGuild) bool { return g.ID == a.d.Discord.GuildID }) {
		log.Info("sign-in refused: not a member of the guild", "discord_id", u.ID)
		return store.Reader{}, nil, http.StatusForbidden, "This server is for members of one Discord server, and your account is not in it."
	}
	name := u.GlobalName
	if name == "" {
		name = u.Username
	}
	avatar := ""
	if u.Avatar != "" {
		avatar = "https://cdn.discordapp.com/avatars/" + url.PathEscape(u.ID) + "/" + url.PathEscape(u.Avatar) + ".png"
	}
	return store.Reader{DiscordID: u.ID, Name: name, AvatarURL: avatar}, tok, 0, ""
}

func discordGet(ctx context.Context, client *http.Client, apiBase string, tok *oauth2.Token, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, apiBase+path, nil)
	if err != nil {
		return errors.New("build request")
	}
	tok.SetAuthHeader(req)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("discord %s: transport failure", path)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("discord %s: status %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(into); err != nil {
		return fmt.Errorf("discord %s: malformed answer", path)
	}
	return nil
}

// redactOAuthErr keeps the token endpoint's address and body (which may echo
// the client secret) out of logs: only the error's kind survives.
func redactOAuthErr(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return fmt.Sprintf("token endpoint answered %d %s", re.Response.StatusCode, re.ErrorCode)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return "token endpoint unreachable: " + ue.Op
	}
	return "token exchange failed"
}

// --- One-time owner sign-in links (local mode) ---

// LoginLinkTTL is how long a printed sign-in link stays valid.
const LoginLinkTTL = 15 * time.Minute

// NewLoginLink stores a single-use owner sign-in link and returns its full URL.
func NewLoginLink(ctx context.Context, s *store.Store, baseURL, ownerID string, now time.Time) (string, error) {
	tok := randomToken()
	if err := s.CreateLoginLink(ctx, hashToken(tok), ownerID, now.Add(LoginLinkTTL), now); err != nil {
		return "", err
	}
	return baseURL + "/login/" + tok, nil
}

// handleLinkPage is the page a one-time link opens: it names who the link
// signs in and where, and asks for the click that spends it. A link already
// used or expired says so at once instead of offering a button that fails.
func (a *auth) handleLinkPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := chi.URLParam(r, "token")
		id, err := a.d.Store.PeekLoginLink(r.Context(), hashToken(tok), a.d.now())
		if errors.Is(err, store.ErrNotFound) {
			a.spentLink(w, r)
			return
		}
		if err != nil {
			failStore(w, r, a.d.Logger, err, "Sign-in could not be checked. Try again.", "sign-in link: peek")
			return
		}
		l := components.LinkLogin{Action: "/login/" + url.PathEscape(tok), Where: a.d.PublicBaseURL}
		if u, err := url.Parse(a.d.PublicBaseURL); err == nil && u.Host != "" {
			l.Where = u.Host
		}
		if id != a.d.OwnerID {
			l.Who = id
			if rd, err := a.d.Store.GetReader(r.Context(), id); err == nil && rd.Name != "" {
				l.Who = rd.Name
			}
		}
		render(w, r, a.d.Logger, http.StatusOK, components.LinkLoginPage(l))
	})
}

// spentLink answers a link already used or expired.
func (a *auth) spentLink(w http.ResponseWriter, r *http.Request) {
	render(w, r, a.d.Logger, http.StatusForbidden, components.LoginPage(a.oauth != nil, "", "This sign-in link was already used or has expired. Ask the owner for a new one (the owner's own: make link)."))
}

func (a *auth) handleLinkSignIn() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log := a.d.Logger
		if !readForm(a.d, w, r, maxFormBody) {
			return
		}
		id, err := a.d.Store.ConsumeLoginLink(r.Context(), hashToken(chi.URLParam(r, "token")), a.d.now())
		if errors.Is(err, store.ErrNotFound) {
			a.spentLink(w, r)
			return
		}
		if err != nil {
			failStore(w, r, log, err, "Sign-in could not be checked. Try again.", "sign-in link")
			return
		}
		rd, home := store.Reader{DiscordID: id, Name: "Owner"}, "/admin"
		if id != a.d.OwnerID {
			// A Reader the owner named: sign in under that name, to My Bookmarks.
			named, err := a.d.Store.GetReader(r.Context(), id)
			switch {
			case errors.Is(err, store.ErrNotFound):
				named = store.Reader{DiscordID: id, Name: id}
			case err != nil:
				failStore(w, r, log, err, "Sign-in could not be checked. Try again.", "sign-in link: read reader")
				return
			}
			rd, home = store.Reader{DiscordID: id, Name: named.Name, AvatarURL: named.AvatarURL}, "/"
		}
		if err := a.signIn(w, r, rd, nil); err != nil {
			failStore(w, r, log, err, "Sign-in could not be recorded. Try again.", "sign-in: record reader")
			return
		}
		log.Info("signed in", "discord_id", id, "via", "link")
		http.Redirect(w, r, home, http.StatusSeeOther)
	})
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashToken(tok string) []byte {
	h := sha256.Sum256([]byte(tok))
	return h[:]
}
