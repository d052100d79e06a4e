package handlers_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
)

// signInByLink spends a sign-in link the owner's page showed with a fresh
// browser that keeps its cookie and does not follow redirects.
func (h *harness) signInByLink(link string) *http.Client {
	h.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if a := h.post(c, strings.TrimPrefix(link, h.srv.URL), nil); a.status != http.StatusSeeOther || a.header.Get("Location") != "/" {
		h.t.Fatalf("the sign-in link answered %d to %q", a.status, a.header.Get("Location"))
	}
	return c
}

// newLocalReader names a Reader on the owner's page and returns their id
// (from the list) and their sign-in link.
func (h *harness) newLocalReader(owner *http.Client, name string) (id, link string) {
	h.t.Helper()
	a := h.post(owner, "/admin/readers", url.Values{"name": {name}})
	link = strings.TrimSpace(a.testid("reader-link").Text())
	if a.status != http.StatusOK || link == "" {
		h.t.Fatalf("naming %s answered %d", name, a.status)
	}
	return h.text(`SELECT discord_id FROM readers WHERE name = $1`, name), link
}

// removeReader is the owner's Sign out everywhere, then Remove, confirmed.
func (h *harness) removeReader(owner *http.Client, id string) {
	h.t.Helper()
	if a := h.post(owner, "/admin/readers/"+url.PathEscape(id)+"/signout", nil); a.status != http.StatusSeeOther {
		h.t.Fatalf("sign out everywhere answered %d", a.status)
	}
	if a := h.post(owner, "/admin/readers/"+url.PathEscape(id)+"/remove", url.Values{"step": {"confirm"}, "confirm": {"yes"}}); a.status != http.StatusSeeOther {
		h.t.Fatalf("the removal answered %d", a.status)
	}
}

// A revocation is permanent: a cookie the owner ended stays ended when a new
// Reader of the same name (in another case) is named afterwards.
func TestARemovedLocalReadersCookieStaysDeadWhenTheSameNameIsGivenAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	owner := h.owner()
	eveID, link := h.newLocalReader(owner, "Eve")
	eve := h.signInByLink(link)
	if a := h.get(eve, "/"); a.status != http.StatusOK {
		t.Fatalf("Eve's fresh session answered %d", a.status)
	}
	h.removeReader(owner, eveID)
	if a := h.get(eve, "/"); a.status != http.StatusSeeOther {
		t.Fatalf("after removal Eve's cookie answered %d", a.status)
	}

	newID, _ := h.newLocalReader(owner, "EVE") // nobody uses this link
	if a := h.get(eve, "/"); a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/login") {
		t.Errorf("Eve's old cookie opens / for the new EVE: %d", a.status)
	}
	if a := h.post(eve, "/tokens", url.Values{"name": {"revived"}}); a.status != http.StatusSeeOther || a.testid("new-token").Length() != 0 {
		t.Errorf("Eve's old cookie made a token: %d", a.status)
	}
	if n := h.text(`SELECT count(*)::text FROM reader_tokens WHERE reader_id = $1`, newID); n != "0" {
		t.Errorf("the new EVE holds %s tokens nobody asked for", n)
	}
	if newID == eveID {
		t.Errorf("the new EVE took the removed Eve's id %s", eveID)
	}
	if n := h.text(`SELECT count(*)::text FROM readers WHERE last_seen_at IS NOT NULL AND discord_id = $1`, newID); n != "0" {
		t.Errorf("the new EVE was seen signed in")
	}
}

// The same holds for a Discord Reader, whose id is Discord's and so comes
// back when they sign in again: the old cookie stays dead, the new sign-in
// works.
func TestARemovedDiscordReadersOldCookieStaysDeadWhenTheySignInAgain(t *testing.T) {
	t.Parallel()
	g := newGuildSite(t)
	old, _ := g.signIn()
	owner := g.owner()
	if a := g.post(owner, "/admin/readers/42/remove", url.Values{"step": {"confirm"}, "confirm": {"yes"}}); a.status != http.StatusSeeOther {
		t.Fatalf("the removal answered %d", a.status)
	}
	if at := g.page(old); at != "/login" {
		t.Fatalf("after removal the old cookie landed on %s", at)
	}
	fresh, tok := g.signIn()
	if at := g.page(fresh); at != "/" {
		t.Fatalf("signing in again landed on %s", at)
	}
	if at := g.page(old); at != "/login" {
		t.Errorf("the cookie from before the removal landed on %s", at)
	}
	if a := g.api("GET", "/api/v1/me", tok, ""); a.status != http.StatusOK {
		t.Errorf("the new token answered %d", a.status)
	}
}
