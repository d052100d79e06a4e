package handlers_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/handlers"
)

const guildID = "111"

// fakeDiscord is a loopback OAuth2 provider that checks PKCE like Discord.
type fakeDiscord struct {
	srv       *httptest.Server
	mu        sync.Mutex
	challenge map[string]string // code → S256 challenge
	userID    string
	guilds    []string
	secret    string
	// The grant the guild re-check spends (CONTEXT.md, Guild re-check):
	// refresh is the one refresh token Discord would accept now (it rotates
	// on use), refreshes counts the refreshes asked, down answers 503 to the
	// token and guilds endpoints, revoked refuses the grant as invalid_grant.
	refresh   string
	refreshes int
	down      bool
	revoked   bool
}

func (f *fakeDiscord) refreshCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refreshes
}

// set changes what the fake answers from now on.
func (f *fakeDiscord) set(change func(f *fakeDiscord)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

func newFakeDiscord(t *testing.T, userID string, guilds ...string) *fakeDiscord {
	f := &fakeDiscord{challenge: map[string]string{}, userID: userID, guilds: guilds, secret: "client-secret"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" {
			http.Error(w, "missing pkce or state", http.StatusBadRequest)
			return
		}
		code := "code-" + q.Get("state")[:8]
		f.mu.Lock()
		f.challenge[code] = q.Get("code_challenge")
		f.mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code="+code+"&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.PostForm.Get("grant_type") == "refresh_token" {
			f.refreshGrant(w, r)
			return
		}
		f.mu.Lock()
		want, ok := f.challenge[r.PostForm.Get("code")]
		delete(f.challenge, r.PostForm.Get("code"))
		f.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != want || r.PostForm.Get("client_secret") != f.secret {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			// Like a careless provider, the refusal echoes what it was sent,
			// client secret included: the log must still not carry it.
			desc, _ := json.Marshal(r.PostForm.Encode())
			_, _ = io.WriteString(w, `{"error":"invalid_grant","error_description":`+string(desc)+`}`)
			return
		}
		f.mu.Lock()
		f.refresh = "rt-1"
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"at-1","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-1"}`)
	})
	mux.HandleFunc("GET /api/users/@me", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer at-1" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"id": f.userID, "username": "reader" + f.userID, "global_name": "Reader " + f.userID})
	})
	mux.HandleFunc("GET /api/users/@me/guilds", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.down {
			http.Error(w, "upstream connect error", http.StatusServiceUnavailable)
			return
		}
		var gs []map[string]string
		for _, g := range f.guilds {
			gs = append(gs, map[string]string{"id": g})
		}
		_ = json.NewEncoder(w).Encode(gs)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// refreshGrant answers a refresh-token grant as Discord does: a new access
// token and a new refresh token, the old one spent.
func (f *fakeDiscord) refreshGrant(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refreshes++
	w.Header().Set("Content-Type", "application/json")
	switch {
	case f.down:
		http.Error(w, "upstream connect error", http.StatusServiceUnavailable)
	case f.revoked || r.PostForm.Get("refresh_token") != f.refresh || r.PostForm.Get("client_secret") != f.secret:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"invalid_grant","error_description":"Invalid \"refresh_token\" in request."}`)
	default:
		f.refresh = fmt.Sprintf("rt-%d", f.refreshes+1)
		_, _ = fmt.Fprintf(w, `{"access_token":"at-r%d","token_type":"Bearer","expires_in":604800,"refresh_token":%q}`, f.refreshes, f.refresh)
	}
}

// newSite serves the real router over a fresh database, with Discord
// sign-in pointed at the fake provider when one is given.
func newSite(t *testing.T, discord *fakeDiscord) *harness {
	t.Helper()
	return newHarness(t, func(d *handlers.Deps) {
		if discord != nil {
			d.Discord = &handlers.DiscordAuth{
				ClientID: "client", ClientSecret: discord.secret, GuildID: guildID,
				Endpoint: oauthEndpoint(discord.srv.URL), APIBase: discord.srv.URL + "/api",
			}
		}
	})
}

// client follows redirects like a browser and keeps cookies.
func client(t testing.TB) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 10 * time.Second}
}

func doc(t *testing.T, resp *http.Response) *goquery.Document {
	t.Helper()
	defer resp.Body.Close()
	d, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDiscordSignInWithStateAndPKCESignsInAGuildMember(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t, ownerID, "5", guildID)
	s := newSite(t, f)
	c := client(t)
	resp, err := c.Get(s.srv.URL + "/login/discord?next=/admin")
	if err != nil {
		t.Fatal(err)
	}
	d := doc(t, resp)
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/admin" {
		t.Fatalf("landed on %s with %d", resp.Request.URL, resp.StatusCode)
	}
	if d.Find(`[data-testid="verdict"]`).Length() != 1 {
		t.Fatalf("the owner did not reach /admin")
	}
	r, err := s.store.GetReader(context.Background(), ownerID)
	if err != nil || r.Name != "Reader "+ownerID {
		t.Fatalf("reader row: %+v %v", r, err)
	}
}

func TestDiscordSignInRefusesSomeoneOutsideTheGuild(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t, "42", "5")
	s := newSite(t, f)
	resp, err := client(t).Get(s.srv.URL + "/login/discord")
	if err != nil {
		t.Fatal(err)
	}
	d := doc(t, resp)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(d.Find(`[data-testid="error-message"]`).Text(), "not in it") {
		t.Fatalf("status %d, message %q", resp.StatusCode, d.Find(`[data-testid="error-message"]`).Text())
	}
	if _, err := s.store.GetReader(context.Background(), "42"); err == nil {
		t.Fatalf("a non-member was recorded as a reader")
	}
}

func TestACallbackIsSpentOnceAndLandsOnThisSite(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t, ownerID, guildID)
	s := newSite(t, f)
	c := client(t)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	hop := func(u string) *http.Response {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	start := hop(s.srv.URL + "/login/discord?next=" + url.QueryEscape("//evil.example/x"))
	callback := hop(start.Header.Get("Location")).Header.Get("Location")
	done := hop(callback)
	if done.StatusCode != http.StatusSeeOther || done.Header.Get("Location") != "/" {
		t.Fatalf("sign-in answered %d to %q, want 303 to /", done.StatusCode, done.Header.Get("Location"))
	}
	// The same callback again, from the same browser: the state was spent.
	if again := hop(callback); again.StatusCode != http.StatusBadRequest {
		t.Fatalf("a replayed callback answered %d, want 400", again.StatusCode)
	}
}

func TestACallbackWithAForeignStateIsRefused(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t, ownerID, guildID)
	s := newSite(t, f)
	c := client(t)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(s.srv.URL + "/login/discord")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = c.Get(s.srv.URL + "/auth/discord/callback?code=x&state=forged")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("forged state: status %d", resp.StatusCode)
	}
}

func TestAWrongPKCEVerifierFailsTheExchange(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t, ownerID, guildID)
	s := newSite(t, f)
	c := client(t)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(s.srv.URL + "/login/discord")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	authURL, _ := url.Parse(resp.Header.Get("Location"))
	q := authURL.Query()
	q.Set("code_challenge", "not-the-challenge")
	authURL.RawQuery = q.Encode()
	resp, err = c.Get(authURL.String()) // the provider redirects back with a code bound to a wrong challenge
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = c.Get(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("status %d, want 502", resp.StatusCode)
	}
	if strings.Contains(s.logs.String(), f.secret) {
		t.Fatalf("the client secret reached a log line")
	}
}

func TestTheOwnerGateRedirectsAnonymousVisitorsAndRefusesOtherReaders(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t, "42", guildID) // a member, not the owner
	s := newSite(t, f)
	anon := client(t)
	anon.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := anon.Get(s.srv.URL + "/admin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login?next=") {
		t.Fatalf("anonymous: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	c := client(t)
	resp, err = c.Get(s.srv.URL + "/login/discord")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = c.Get(s.srv.URL + "/admin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("non-owner: %d", resp.StatusCode)
	}
}

func TestAOneTimeLinkSignsTheOwnerInOnceAndOnlyOnce(t *testing.T) {
	t.Parallel()
	s := newSite(t, nil)
	link, err := handlers.NewLoginLink(context.Background(), s.store, s.srv.URL, ownerID, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(link, s.srv.URL+"/login/") {
		t.Fatalf("link %q", link)
	}
	c := client(t)
	resp, err := c.Get(link) // a GET only shows the button: previews cannot spend it
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = c.PostForm(link, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := doc(t, resp)
	if resp.Request.URL.Path != "/admin" || d.Find(`[data-testid="verdict"]`).Length() != 1 {
		t.Fatalf("first use landed on %s (%d)", resp.Request.URL, resp.StatusCode)
	}
	resp, err = client(t).PostForm(link, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("second use: %d", resp.StatusCode)
	}
	if strings.Contains(s.logs.String(), strings.TrimPrefix(link, s.srv.URL+"/login/")) {
		t.Fatalf("the sign-in token reached a log line")
	}
}

func TestACrossOriginPostIsRefused(t *testing.T) {
	t.Parallel()
	s := newSite(t, nil)
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Origin": "https://evil.example"},
	} {
		req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/logout", nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("%v: status %d, want 403", h, resp.StatusCode)
		}
	}

	// A refused cross-origin POST of a sign-in link is logged without its token.
	link, err := handlers.NewLoginLink(context.Background(), s.store, s.srv.URL, ownerID, t0)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, link, nil)
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin sign-in POST: status %d, want 403", resp.StatusCode)
	}
	if tok := strings.TrimPrefix(link, s.srv.URL+"/login/"); strings.Contains(s.logs.String(), tok) {
		t.Fatalf("the sign-in token reached a log line:\n%s", s.logs.String())
	}
}

func TestHealthzFollowsTheDatabase(t *testing.T) {
	t.Parallel()
	s := newSite(t, nil)
	resp, err := http.Get(s.srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthy: %d", resp.StatusCode)
	}
	s.store.Close()
	resp, err = http.Get(s.srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("database closed: %d", resp.StatusCode)
	}
}

func TestStaticAssetsAreServedWithLongLivedCacheHeaders(t *testing.T) {
	t.Parallel()
	s := newSite(t, nil)
	resp, err := client(t).Get(s.srv.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	d := doc(t, resp)
	src, _ := d.Find("script[src]").Attr("src")
	if !strings.Contains(src, "htmx-2.0.11") {
		t.Fatalf("htmx script %q", src)
	}
	resp, err = http.Get(s.srv.URL + src)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") || !strings.Contains(string(body), "htmx") {
		t.Fatalf("asset: %d %q", resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
}

func TestSigningOutEndsACopiedSessionCookieToo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.owner()
	base, _ := url.Parse(h.srv.URL)
	copied := c.Jar.Cookies(base)
	if len(copied) == 0 {
		t.Fatal("no session cookie after sign-in")
	}
	if a := h.get(c, "/admin"); a.status != http.StatusOK {
		t.Fatalf("signed in: %d", a.status)
	}
	if a := h.post(c, "/logout", nil); a.status != http.StatusSeeOther {
		t.Fatalf("sign out: %d", a.status)
	}
	other := anonymous()
	other.Jar, _ = cookiejar.New(nil)
	other.Jar.SetCookies(base, copied)
	if a := h.get(other, "/admin"); a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/login") {
		t.Fatalf("a copy of the cookie still works after sign-out: %d %s", a.status, a.header.Get("Location"))
	}
	// Signing in again works, with a fresh cookie.
	if a := h.get(h.owner(), "/admin"); a.status != http.StatusOK {
		t.Fatalf("signing in again: %d", a.status)
	}
}

func TestTheSessionCookieIsHttpOnlyLaxAndSecureExactlyWhenThePublicAddressIsHTTPS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base   string
		secure bool
	}{
		{"https://bookmarks.example.org", true},
		{"", false}, // the harness's own http:// address
	} {
		t.Run(tc.base, func(t *testing.T) {
			h := newHarness(t, func(d *handlers.Deps) {
				if tc.base != "" {
					d.PublicBaseURL = tc.base
				}
			})
			link, err := handlers.NewLoginLink(context.Background(), h.store, h.srv.URL, ownerID, t0)
			if err != nil {
				t.Fatal(err)
			}
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := c.Post(link, "application/x-www-form-urlencoded", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			var session *http.Cookie
			for _, ck := range resp.Cookies() {
				if ck.Name == "mb_session" {
					session = ck
				}
			}
			if resp.StatusCode != http.StatusSeeOther || session == nil {
				t.Fatalf("sign-in answered %d with cookies %v", resp.StatusCode, resp.Cookies())
			}
			if !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Secure != tc.secure {
				t.Fatalf("session cookie HttpOnly=%v SameSite=%v Secure=%v, want true, Lax, %v", session.HttpOnly, session.SameSite, session.Secure, tc.secure)
			}
		})
	}
}

func TestAfterDiscordSignInTheNextAddressNeverLeavesTheSite(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t, ownerID, guildID)
	s := newSite(t, f)
	for _, next := range []string{"/\t/evil.example", "/\n/evil.example", "//evil.example", "/\\evil.example", "/x\\..\\\\evil.example", "https://evil.example/", "evil.example"} {
		t.Run(fmt.Sprintf("%q", next), func(t *testing.T) {
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			loc := s.srv.URL + "/login/discord?next=" + url.QueryEscape(next)
			for range 2 { // sign-in start → the provider → our callback
				resp, err := c.Get(loc)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				loc = resp.Header.Get("Location")
			}
			resp, err := c.Get(loc)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
				t.Fatalf("callback answered %d to %q, want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
			}
		})
	}
}

func TestASignInLinkExpiresAfterFifteenMinutes(t *testing.T) {
	t.Parallel()
	s := newSite(t, nil) // the site's clock reads t0
	for _, tc := range []struct {
		age  time.Duration
		want int
	}{
		{handlers.LoginLinkTTL - time.Minute, http.StatusSeeOther},
		{handlers.LoginLinkTTL + time.Second, http.StatusForbidden},
	} {
		link, err := handlers.NewLoginLink(context.Background(), s.store, s.srv.URL, ownerID, t0.Add(-tc.age))
		if err != nil {
			t.Fatal(err)
		}
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.PostForm(link, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("a link %v old answered %d, want %d", tc.age, resp.StatusCode, tc.want)
		}
	}
}

// The sign-in help names the command that prints a fresh owner link in the
// server's checkout, where `make run` leaves no mangabookmark on the PATH
// (issue 23, item 3): on the sign-in page, and on the page of a spent link.
func TestTheSignInHelpNamesMakeLink(t *testing.T) {
	t.Parallel()
	s := newSite(t, nil)
	resp, err := client(t).Get(s.srv.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	if d := doc(t, resp); !strings.Contains(d.Find("main").Text(), "make link in the server's checkout prints a fresh one") {
		t.Errorf("the sign-in page's help: %q", d.Find("main").Text())
	}
	link, err := handlers.NewLoginLink(context.Background(), s.store, s.srv.URL, ownerID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c := client(t)
	for range 2 {
		if resp, err = c.Post(link, "application/x-www-form-urlencoded", nil); err != nil {
			t.Fatal(err)
		}
	}
	if d := doc(t, resp); resp.StatusCode != http.StatusForbidden || !strings.Contains(d.Find("[data-testid=login-message]").Text(), "(the owner's own: make link)") {
		t.Errorf("a spent link answered %d: %q", resp.StatusCode, d.Find("main").Text())
	}
}
