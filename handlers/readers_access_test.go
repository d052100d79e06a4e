package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store"
)

// Issue 22, item 12: sessions and tokens.

func TestSigningAReaderOutEverywhereRevokesTheirAPITokensToo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.client(readerA)
	tok := h.apiToken(readerA, "laptop")
	keep := h.apiToken(readerB, "someone else's")
	if a := h.post(h.owner(), "/admin/readers/"+readerA+"/signout", nil); a.status != http.StatusSeeOther {
		t.Fatalf("sign out everywhere answered %d", a.status)
	}
	if a := h.api("GET", "/api/v1/me", tok, ""); a.status != http.StatusUnauthorized {
		t.Errorf("the Reader's token still works after sign out everywhere: %d", a.status)
	}
	if n := h.text(`SELECT count(*)::text FROM reader_tokens WHERE reader_id = $1`, readerA); n != "0" {
		t.Errorf("%s tokens of the Reader survived", n)
	}
	if a := h.get(c, "/"); a.status != http.StatusSeeOther {
		t.Errorf("the Reader's session survived: %d", a.status)
	}
	if a := h.api("GET", "/api/v1/me", keep, ""); a.status != http.StatusOK {
		t.Errorf("another Reader's token stopped working: %d", a.status)
	}
	page := h.get(h.owner(), "/admin/readers?signed-out=1")
	if !strings.Contains(page.body, "API tokens are revoked") {
		t.Errorf("the page does not say the tokens went")
	}
}

func TestTheOwnerRemovesAReaderOnlyAfterConfirmingAndEverythingOfTheirsGoes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset) // Reader "r1" holds the dataset's Bookmarks
	bookmarks := h.text(`SELECT count(*)::text FROM bookmarks WHERE reader_id = 'r1'`)
	r1 := h.client("r1")
	tok := h.apiToken("r1", "phone")
	h.exec(`INSERT INTO login_links (token_hash, discord_id, expires_at) VALUES ('\x01', 'r1', $1)`, t0.Add(time.Hour))
	h.apiToken(readerB, "")
	owner := h.owner()
	remaining := func() string {
		return h.text(`SELECT (SELECT count(*) FROM readers WHERE discord_id = 'r1') || '/' ||
			(SELECT count(*) FROM bookmarks WHERE reader_id = 'r1') || '/' ||
			(SELECT count(*) FROM reader_tokens WHERE reader_id = 'r1') || '/' ||
			(SELECT count(*) FROM login_links WHERE discord_id = 'r1')`)
	}
	before := remaining()
	if before != "1/"+bookmarks+"/1/1" {
		t.Fatalf("seeded: %s", before)
	}

	// The owner's own row offers no Remove (the server refuses it); another
	// Reader's row does.
	list := h.get(owner, "/admin/readers")
	if n := list.find(`[data-reader-id="` + ownerID + `"] [data-testid="remove-reader"]`).Length(); n != 0 {
		t.Errorf("the owner's row offers Remove")
	}
	if n := list.find(`[data-reader-id="r1"] [data-testid="remove-reader"]`).Length(); n != 1 {
		t.Errorf("r1's row offers Remove %d times, want once", n)
	}

	step := h.post(owner, "/admin/readers/r1/remove", nil)
	sentence := step.testid("remove-bookmarks").Text()
	if step.status != http.StatusOK || step.testid("remove-confirm").Length() != 1 || sentence != "Their "+bookmarks+" Bookmarks are deleted with them, Progress included." {
		t.Fatalf("step one answered %d, confirm form %d, sentence %q", step.status, step.testid("remove-confirm").Length(), sentence)
	}
	if _, ticked := step.testid("remove-confirm-box").Attr("checked"); ticked || remaining() != before {
		t.Fatalf("step one removed something or came pre-ticked: %s", remaining())
	}
	if a := h.post(owner, "/admin/readers/r1/remove", url.Values{"step": {"confirm"}}); a.status != http.StatusUnprocessableEntity || remaining() != before {
		t.Fatalf("an unticked confirm answered %d and left %s", a.status, remaining())
	}
	if a := h.post(owner, "/admin/readers/r1/remove", url.Values{"step": {"confirm"}, "confirm": {"yes"}}); a.status != http.StatusSeeOther {
		t.Fatalf("the confirmed removal answered %d", a.status)
	}
	if got := remaining(); got != "0/0/0/0" {
		t.Errorf("after removal (reader/bookmarks/tokens/links): %s", got)
	}
	if a := h.get(r1, "/"); a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/login") {
		t.Errorf("the removed Reader's session still works: %d", a.status)
	}
	if a := h.api("GET", "/api/v1/me", tok, ""); a.status != http.StatusUnauthorized {
		t.Errorf("the removed Reader's token still works: %d", a.status)
	}
	if h.text(`SELECT count(*)::text FROM reader_tokens WHERE reader_id = $1`, readerB) != "1" {
		t.Error("another Reader's token went too")
	}
	if !strings.Contains(h.logs.String(), "reader removed") {
		t.Error("no log line for the removal")
	}
	if a := h.post(owner, "/admin/readers/"+ownerID+"/remove", url.Values{"step": {"confirm"}, "confirm": {"yes"}}); a.status != http.StatusConflict {
		t.Errorf("removing the owner answered %d", a.status)
	}
	if a := h.post(h.client(readerB), "/admin/readers/"+readerA+"/remove", url.Values{"step": {"confirm"}, "confirm": {"yes"}}); a.status != http.StatusForbidden {
		t.Errorf("a Reader reached the removal: %d", a.status)
	}
}

func TestAReaderHoldsAtMostTwentyTokensAndTheTwentyFirstIsRefusedWithASentence(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.client(readerA)
	for i := range store.MaxTokens {
		if a := h.post(c, "/tokens", url.Values{"name": {"browser " + strconv.Itoa(i)}}); a.status != http.StatusOK {
			t.Fatalf("token %d answered %d", i+1, a.status)
		}
	}
	a := h.post(c, "/tokens", url.Values{"name": {"one too many"}})
	if a.status != http.StatusConflict || a.testid("new-token").Length() != 0 || !strings.Contains(a.body, "the most one Reader may") {
		t.Fatalf("the 21st answered %d (token shown: %v)", a.status, a.testid("new-token").Length() != 0)
	}
	if n := h.text(`SELECT count(*)::text FROM reader_tokens WHERE reader_id = $1`, readerA); n != "20" {
		t.Fatalf("%s tokens held", n)
	}
	// Concurrent requests at the cap still make none beyond it.
	h.exec(`DELETE FROM reader_tokens WHERE id = (SELECT min(id) FROM reader_tokens)`)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_, hash := handlers.NewAPIToken(h.deps.TokenKey)
			_, _ = h.store.CreateToken(context.Background(), readerA, hash, "race", t0)
		})
	}
	wg.Wait()
	if n := h.text(`SELECT count(*)::text FROM reader_tokens WHERE reader_id = $1`, readerA); n != "20" {
		t.Fatalf("after a race at the cap: %s tokens", n)
	}
}

func TestTwoLocalReadersCannotShareANameInAnyCase(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	owner := h.owner()
	first := h.post(owner, "/admin/readers", url.Values{"name": {"Ada"}})
	if first.status != http.StatusOK || first.testid("reader-link").Length() != 1 {
		t.Fatalf("the first Ada answered %d", first.status)
	}
	second := h.post(owner, "/admin/readers", url.Values{"name": {"ada"}})
	if second.status != http.StatusConflict || second.testid("reader-link").Length() != 0 || !strings.Contains(second.body, "exists already") {
		t.Fatalf("a second Ada answered %d (link made: %v)", second.status, second.testid("reader-link").Length() != 0)
	}
	if got := h.text(`SELECT string_agg(name, ',') FROM readers WHERE discord_id LIKE 'local-%'`); got != "Ada" {
		t.Errorf("local Readers: %q", got)
	}
	// The first Ada still gets a new link from her row, and it signs her in.
	page := h.get(owner, "/admin/readers")
	ada := page.find(`[data-testid="reader"]`).FilterFunction(func(_ int, s *goquery.Selection) bool { return strings.Contains(s.Text(), "Ada") })
	id := ada.AttrOr("data-reader-id", "")
	if ada.Find(`[data-testid="new-reader-link"]`).Length() != 1 {
		t.Fatal("Ada's row offers no new link")
	}
	again := h.post(owner, "/admin/readers/"+id+"/link", nil)
	link := strings.TrimSpace(again.testid("reader-link").Text())
	if again.status != http.StatusOK || !strings.HasPrefix(link, h.srv.URL+"/login/") {
		t.Fatalf("a new link for Ada answered %d", again.status)
	}
	if a := h.do(anonymous(), http.MethodPost, strings.TrimPrefix(link, h.srv.URL), url.Values{}); a.status != http.StatusSeeOther || a.header.Get("Location") != "/" {
		t.Errorf("Ada's new link answered %d", a.status)
	}
	if a := h.post(owner, "/admin/readers/"+readerB+"/link", nil); a.status != http.StatusNotFound {
		t.Errorf("a link for a Discord Reader's id answered %d", a.status)
	}
}

// guildSite is a site with Discord sign-in against the fake and a clock the
// test moves.
type guildSite struct {
	*harness
	f   *fakeDiscord
	mu  sync.Mutex
	now time.Time
}

func newGuildSite(t *testing.T) *guildSite {
	g := &guildSite{f: newFakeDiscord(t, "42", "5", guildID), now: t0}
	g.harness = newHarness(t, func(d *handlers.Deps) {
		d.Discord = &handlers.DiscordAuth{ClientID: "client", ClientSecret: g.f.secret, GuildID: guildID,
			Endpoint: oauthEndpoint(g.f.srv.URL), APIBase: g.f.srv.URL + "/api"}
		d.Now = func() time.Time { g.mu.Lock(); defer g.mu.Unlock(); return g.now }
	})
	return g
}

func (g *guildSite) skip(d time.Duration) { g.mu.Lock(); g.now = g.now.Add(d); g.mu.Unlock() }

// signIn signs Reader 42 in through Discord and gives them an API token.
func (g *guildSite) signIn() (*http.Client, string) {
	g.t.Helper()
	c := client(g.t)
	resp, err := c.Get(g.srv.URL + "/login/discord")
	if err != nil {
		g.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/" {
		g.t.Fatalf("Discord sign-in landed on %s with %d", resp.Request.URL, resp.StatusCode)
	}
	return c, g.apiToken("42", "laptop")
}

// page opens / with a browser client and says where it landed.
func (g *guildSite) page(c *http.Client) string {
	g.t.Helper()
	resp, err := c.Get(g.srv.URL + "/")
	if err != nil {
		g.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Request.URL.Path
}

func TestTheGuildIsAskedAgainAfterADayAndSomeoneWhoLeftLosesSessionsAndTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		leave  func(f *fakeDiscord)
		viaAPI bool
	}{
		{"left the guild, seen on a page", func(f *fakeDiscord) { f.guilds = []string{"5"} }, false},
		{"revoked the app, seen on a page", func(f *fakeDiscord) { f.revoked = true }, false},
		{"left the guild, seen by the userscript", func(f *fakeDiscord) { f.guilds = []string{"5"} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGuildSite(t)
			c, tok := g.signIn()
			if stored := g.text(`SELECT encode(discord_refresh, 'escape') FROM readers WHERE discord_id = '42'`); stored == "" || strings.Contains(stored, "rt-1") {
				t.Fatalf("the refresh token is not kept sealed: %q", stored)
			}
			g.f.set(tc.leave)
			g.skip(23 * time.Hour)
			if at := g.page(c); at != "/" || g.f.refreshCount() != 0 {
				t.Fatalf("within the day: landed on %s after %d refreshes", at, g.f.refreshCount())
			}
			g.skip(2 * time.Hour)
			if tc.viaAPI {
				if a := g.api("GET", "/api/v1/me", tok, ""); a.status != http.StatusUnauthorized {
					t.Fatalf("the token answered %d after the Reader left", a.status)
				}
			} else if at := g.page(c); at != "/login" {
				t.Fatalf("after a day the Reader who left landed on %s", at)
			}
			if g.f.refreshCount() != 1 {
				t.Errorf("%d refreshes, want 1", g.f.refreshCount())
			}
			if a := g.api("GET", "/api/v1/me", tok, ""); a.status != http.StatusUnauthorized {
				t.Errorf("the token still works: %d", a.status)
			}
			if at := g.page(c); at != "/login" {
				t.Errorf("the session still works: %s", at)
			}
			if got := g.text(`SELECT count(*) || '/' || (SELECT count(*) FROM readers WHERE discord_id = '42' AND discord_refresh IS NULL) FROM reader_tokens`); got != "0/1" {
				t.Errorf("tokens/forgotten grant: %s", got)
			}
			if !strings.Contains(g.logs.String(), "no longer a member; signed out everywhere") {
				t.Error("no log line for the sign-out")
			}
			if strings.Contains(g.logs.String(), "rt-") {
				t.Error("a refresh token was logged")
			}
		})
	}
}

func TestADiscordOutageDuringTheGuildReCheckSignsNobodyOut(t *testing.T) {
	t.Parallel()
	g := newGuildSite(t)
	c, tok := g.signIn()
	g.f.set(func(f *fakeDiscord) { f.down = true })
	g.skip(25 * time.Hour)
	if at := g.page(c); at != "/" {
		t.Fatalf("during an outage the Reader landed on %s", at)
	}
	if a := g.api("GET", "/api/v1/me", tok, ""); a.status != http.StatusOK {
		t.Fatalf("during an outage the token answered %d", a.status)
	}
	if g.f.refreshCount() != 1 {
		t.Errorf("%d refreshes during the outage hour, want 1 (asked again after an hour, not on every request)", g.f.refreshCount())
	}
	// Discord answers again, but the guild list does not (a 503 there).
	g.f.set(func(f *fakeDiscord) { f.down = false })
	g.skip(time.Hour)
	if at := g.page(c); at != "/" {
		t.Fatalf("after the outage the member landed on %s", at)
	}
	due := g.text(`SELECT (guild_check_due_at = $1::timestamptz)::text FROM readers WHERE discord_id = '42'`, t0.Add(26*time.Hour+handlers.GuildCheckEvery))
	if due != "true" || g.f.refreshCount() != 2 {
		t.Errorf("after a good check: next due a day later %s, %d refreshes", due, g.f.refreshCount())
	}
	if n := g.text(`SELECT count(*)::text FROM reader_tokens`); n != "1" {
		t.Errorf("%s tokens after the outage", n)
	}
	// The rotated refresh token was kept: the next day's check spends it.
	g.skip(25 * time.Hour)
	if at := g.page(c); at != "/" || g.f.refreshCount() != 3 {
		t.Errorf("the next day: landed on %s after %d refreshes", at, g.f.refreshCount())
	}
	if strings.Contains(g.logs.String(), "signed out") {
		t.Error("an outage signed the Reader out")
	}
}

func TestADiscordReaderWithNoKeptGrantSignsInAgainOnceAndKeepsTheirTokens(t *testing.T) {
	t.Parallel()
	g := newGuildSite(t)
	c, tok := g.signIn()
	// As a Reader who signed in before grants were kept (migration 0019).
	g.exec(`UPDATE readers SET discord_refresh = NULL, guild_check_due_at = $1 WHERE discord_id = '42'`, t0)
	if at := g.page(c); at != "/login" {
		t.Fatalf("a Reader with no grant landed on %s", at)
	}
	if a := g.api("GET", "/api/v1/me", tok, ""); a.status != http.StatusOK {
		t.Errorf("their token answered %d: no grant is not evidence of leaving", a.status)
	}
	c, _ = g.signIn()
	g.skip(25 * time.Hour)
	if at := g.page(c); at != "/" || g.f.refreshCount() != 1 {
		t.Errorf("after signing in again: %s, %d refreshes", at, g.f.refreshCount())
	}
}
