package handlers_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/store/storetest"
)

const (
	asuraSuffixed = "https://asurascans.com/comics/nano-machine-7f873ca6"
	asuraChapter  = "https://asurascans.com/comics/nano-machine/chapter/12"
	kaganeReader  = "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162/reader/019c2bda-0000-7000-8000-000000000003"
	novelChapter  = "https://novelfull.com/reverend-insanity/chapter-7-a.html"
	unknownSite   = "https://example.com/manga/x"
	notAnAddress  = "nano machine"
	htmxHeader    = "HX-Request"
	readerA       = "reader-a"
	readerB       = "reader-b"
	bookmarkQuery = `SELECT coalesce(string_agg(reader_id || ' ' || site || '/' || series_id || ' ' || coalesce(progress_num::text, '-'), E'\n' ORDER BY 1), '') FROM bookmarks`
)

func (h *harness) text(sql string, args ...any) string {
	h.t.Helper()
	var s string
	if err := h.pool.QueryRow(context.Background(), sql, args...).Scan(&s); err != nil {
		h.t.Fatalf("%v\n%s", err, sql)
	}
	return s
}

func results(a answer) []string {
	var out []string
	a.testid("add-result").Each(func(_ int, s *goquery.Selection) { out = append(out, s.AttrOr("data-result", "")) })
	return out
}

func TestAddByAddressAnswersEveryLineOnItsOwn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.client(readerA)
	woken := h.listenWakes()
	paste := strings.Join([]string{asuraSuffixed, "", "  " + asuraSuffixed + "  ", asuraChapter, kaganeReader, novelChapter, unknownSite, notAnAddress}, "\n")
	a := h.post(c, "/", url.Values{"urls": {paste}})
	if a.status != http.StatusOK {
		t.Fatalf("add answered %d: %s", a.status, a.body)
	}
	want := []string{"added", "already", "progress", "added", "added", "unsupported", "unsupported"}
	if got := results(a); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("results %v, want %v", got, want)
	}
	if s := a.testid("add-result").Eq(5).Text(); !strings.Contains(s, "asurascans, demonicscans, comix, kagane, novelfull, lightnovelworld") {
		t.Errorf("an unsupported line does not list the Sites: %q", s)
	}
	if s := a.testid("add-result").Eq(2).Text(); !strings.Contains(s, "Progress set to 12") {
		t.Errorf("the chapter line: %q", s)
	}
	got := h.text(bookmarkQuery)
	wantRows := "reader-a asurascans/nano-machine 12\nreader-a kagane/019c2b1c-cc9b-745f-afed-09c230759162 -\nreader-a novelfull/reverend-insanity 7"
	if got != wantRows {
		t.Fatalf("bookmarks:\n%s\nwant:\n%s", got, wantRows)
	}
	// Every new Series carries a Forced Poll request and woke its Lane.
	if n := h.text(`SELECT count(*)::text FROM series WHERE force_poll_at IS NOT NULL`); n != "3" {
		t.Errorf("%s new Series asked for a Poll, want 3", n)
	}
	if w := strings.Join(woken(), ","); !strings.Contains(w, "asurascans") || !strings.Contains(w, "kagane") || !strings.Contains(w, "novelfull") {
		t.Errorf("Lanes woken: %q", w)
	}
	// The new rows are on the page the add answered with.
	if n := a.testid("bookmark").Length(); n != 3 {
		t.Errorf("the page after the add lists %d Bookmarks, want 3", n)
	}
}

func TestAPasteOverTwoHundredLinesAddsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.client(readerA)
	lines := make([]string, 201)
	for i := range lines {
		lines[i] = "https://novelfull.com/n" + strconv.Itoa(i) + ".html"
	}
	a := h.post(c, "/", url.Values{"urls": {strings.Join(lines, "\n")}})
	if a.status != http.StatusBadRequest || !strings.Contains(a.testid("message").Text(), "at most 200") {
		t.Fatalf("201 lines answered %d %q", a.status, a.testid("message").Text())
	}
	if n := h.text(`SELECT count(*)::text FROM series`); n != "0" {
		t.Errorf("%s Series were added from a refused paste", n)
	}
	a = h.post(c, "/", url.Values{"urls": {strings.Join(lines[:200], "\n")}})
	if a.status != http.StatusOK || len(results(a)) != 200 {
		t.Fatalf("200 lines answered %d with %d results", a.status, len(results(a)))
	}
}

func TestAnHtmxAddAnswersTheBoxAndTheListOutOfBand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.client(readerA)
	a := h.post(c, "/", url.Values{"urls": {asuraSuffixed}}, htmxHeader, "true")
	if a.status != http.StatusOK || a.find("html").Length() != 0 && strings.Contains(a.body, "<html") {
		t.Fatalf("htmx add answered %d with a whole page", a.status)
	}
	if a.find("#add-box").Length() != 1 || a.find(`#bookmark-list[hx-swap-oob="true"] [data-testid="bookmark"]`).Length() != 1 {
		t.Errorf("htmx add: want the box and the list out of band: %s", a.body)
	}
}

func TestTheOwnersBoxAddsSeriesWithNoBookmark(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.post(h.owner(), "/admin/series", url.Values{"urls": {asuraSuffixed + "\n" + asuraSuffixed + "\n" + unknownSite}})
	if got := strings.Join(results(a), ","); a.status != http.StatusOK || got != "added,already,unsupported" {
		t.Fatalf("owner add answered %d %q", a.status, got)
	}
	if n := h.text(`SELECT count(*)::text FROM bookmarks`); n != "0" {
		t.Errorf("the owner's box made %s Bookmarks", n)
	}
	if href := a.find(`[data-testid="add-result-link"]`).First().AttrOr("href", ""); href != "/admin/series/asurascans/nano-machine" {
		t.Errorf("the added Series links %q", href)
	}
	if d := h.get(h.owner(), "/admin/series/asurascans/nano-machine"); d.status != http.StatusOK || d.find(`[data-testid="delete-control"], [data-testid="orphan-note"]`).Length() == 0 && !strings.Contains(strings.ToLower(d.body), "orphan") {
		t.Errorf("the detail page does not show the new Series as an orphan")
	}
	row := a.find(`[data-testid="series-row"][data-series-id="nano-machine"]`)
	if row.Length() != 1 || !strings.Contains(a.testid("list-caption").Text(), "orphan") {
		t.Errorf("the new Series is not shown among the orphans: %q", a.testid("list-caption").Text())
	}
	// A Reader's add box is not the owner's: a Reader cannot post to it.
	if a := h.post(h.client(readerA), "/admin/series", url.Values{"urls": {novelChapter}}); a.status != http.StatusForbidden {
		t.Errorf("a Reader posting to the owner's box: %d", a.status)
	}
}

// seedReaderRows gives readerA three Bookmarks: one with the ember whose
// next chapter's address Asura can build, one caught up, one with no chapter.
func seedReaderRows(h *harness) {
	h.t.Helper()
	c := h.client(readerA)
	h.post(c, "/", url.Values{"urls": {asuraChapter + "\nhttps://demonicscans.org/title/Martial-Peak/chapter/30/1\n" + kaganeReader}})
	// The numbers a Poll read from the pages (polled_chapter_num: the base
	// of the Sighting bound).
	h.exec(`UPDATE series SET latest_chapter_num = 15, polled_chapter_num = 15, latest_chapter_url = 'https://asurascans.com/comics/nano-machine-7f873ca6/chapter/15', title = 'Nano Machine', latest_chapter_at = $1 WHERE site = 'asurascans'`, t0.Add(-3*3600e9))
	h.exec(`UPDATE series SET latest_chapter_num = 30, polled_chapter_num = 30, title = 'Martial Peak' WHERE site = 'demonicscans'`)
}

func TestMyBookmarksShowTheEmberFirstAndLinkTheNextChapter(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedReaderRows(h)
	a := h.get(h.client(readerA), "/")
	rows := a.testid("bookmark")
	if rows.Length() != 3 {
		t.Fatalf("%d rows", rows.Length())
	}
	first := rows.First()
	if first.AttrOr("data-site", "") != "asurascans" || first.AttrOr("data-series-id", "") != "nano-machine" || first.Find(`[data-testid="ember"]`).Length() != 1 {
		t.Fatalf("the first row is not the one with the ember: %s", first.Text())
	}
	if a.testid("ember").Length() != 1 {
		t.Errorf("%d embers, want 1", a.testid("ember").Length())
	}
	if href := first.Find(`[data-testid="next"]`).AttrOr("href", ""); href != "https://asurascans.com/comics/nano-machine/chapter/13" {
		t.Errorf("next chapter link %q", href)
	}
	if s := first.Text(); !strings.Contains(s, "Latest 15") || !strings.Contains(s, "seen 3 hours ago") || !strings.Contains(s, "you 12") {
		t.Errorf("row text %q", s)
	}
	if first.Find(`[data-testid="cover-placeholder"]`).Text() != "N" {
		t.Errorf("no drawn cover on the row")
	}
	// A row with no chapter past Progress opens the Series page.
	caught := a.find(`[data-testid="bookmark"][data-site="demonicscans"] [data-testid="next"]`)
	if caught.AttrOr("href", "") != "https://demonicscans.org/manga/Martial-Peak" {
		t.Errorf("caught-up row opens %q", caught.AttrOr("href", ""))
	}
}

// Issue 22, item 11: a Latest Chapter a Reader's Sighting raised, which no
// read of the Site's page has shown, says whose word it is on the row.
func TestARaisedUnconfirmedLatestChapterSaysWhoSawIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedReaderRows(h)
	storetest.Ensure(t, h.pool, storetest.Reader{ID: "ada", Name: "Ada"})
	ctx := context.Background()
	for _, raise := range []struct{ site, id, num, by string }{
		{"asurascans", "nano-machine", "16", "ada"},
		{"demonicscans", "Martial-Peak", "31", readerA},
	} {
		if raised, err := h.store.RaiseLatest(ctx, raise.site, raise.id, raise.num, "", raise.by, t0); err != nil || !raised {
			t.Fatalf("raise %s: %v %v", raise.id, raised, err)
		}
	}
	a := h.get(h.client(readerA), "/")
	row := func(site string) string {
		return a.find(`[data-testid="bookmark"][data-site="` + site + `"] [data-testid="unconfirmed"]`).Text()
	}
	if got := row("asurascans"); got != "seen by Ada, not yet on the Site's page" {
		t.Errorf("Ada's raise reads %q", got)
	}
	if got := row("demonicscans"); got != "seen by you, not yet on the Site's page" {
		t.Errorf("my own raise reads %q", got)
	}
	if got := row("kagane"); got != "" {
		t.Errorf("a row no Sighting raised reads %q", got)
	}
}

func TestFilterAndSearchNarrowTheListAndHtmxGetsTheRegion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedReaderRows(h)
	c := h.client(readerA)
	ids := func(a answer) string {
		var out []string
		a.testid("bookmark").Each(func(_ int, s *goquery.Selection) { out = append(out, s.AttrOr("data-site", "")) })
		return strings.Join(out, ",")
	}
	if got := ids(h.get(c, "/?new=1")); got != "asurascans" {
		t.Errorf("new chapters only: %q", got)
	}
	if got := ids(h.get(c, "/?q=martial")); got != "demonicscans" {
		t.Errorf("search: %q", got)
	}
	a := h.get(c, "/?new=1&q=martial", htmxHeader, "true")
	if a.status != http.StatusOK || strings.Contains(a.body, "<html") || a.testid("bookmarks-empty").Length() != 1 {
		t.Errorf("htmx filter answered %d: %s", a.status, a.body)
	}
	if a.header.Get("HX-Push-Url") != "/?new=1&q=martial" {
		t.Errorf("pushed %q", a.header.Get("HX-Push-Url"))
	}
}

func TestRowControlsWorkAsPlainFormsAndAsHtmxRowSwaps(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedReaderRows(h)
	c := h.client(readerA)
	base := "/bookmarks/asurascans/nano-machine"
	// htmx: caught up answers the row alone, the ember gone.
	a := h.post(c, base+"/caught-up", nil, htmxHeader, "true")
	if a.status != http.StatusOK || strings.Contains(a.body, "<html") || a.testid("bookmark").Length() != 1 || a.testid("ember").Length() != 0 {
		t.Fatalf("caught up (htmx) answered %d: %s", a.status, a.body)
	}
	if got := h.text(`SELECT progress_num::text FROM bookmarks WHERE site = 'asurascans'`); got != "15" {
		t.Errorf("caught up stored %s, want 15", got)
	}
	// Plain form: set Progress (down too: the Reader means the number) and redirect home.
	a = h.post(c, base+"/progress", url.Values{"num": {"013.50"}})
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/" {
		t.Fatalf("plain set progress answered %d to %q", a.status, a.header.Get("Location"))
	}
	if got := h.text(`SELECT progress_num::text FROM bookmarks WHERE site = 'asurascans'`); got != "13.5" {
		t.Errorf("set progress stored %s, want 13.5", got)
	}
	if a := h.post(c, base+"/progress", url.Values{"num": {"twelve"}}, htmxHeader, "true"); a.status != http.StatusBadRequest || !strings.Contains(a.body, "Type a chapter number") {
		t.Errorf("a word as Progress answered %d", a.status)
	}
	// Remove, then Undo: the Bookmark is back with its Progress.
	a = h.post(c, base+"/remove", nil, htmxHeader, "true")
	if a.status != http.StatusOK || a.testid("removed").Length() != 1 || a.testid("undo").Length() != 1 {
		t.Fatalf("remove (htmx) answered %d: %s", a.status, a.body)
	}
	form := url.Values{}
	a.find(`[data-testid="removed"] input[type=hidden]`).Each(func(_ int, s *goquery.Selection) {
		form.Set(s.AttrOr("name", ""), s.AttrOr("value", ""))
	})
	if n := h.text(`SELECT count(*)::text FROM bookmarks WHERE site = 'asurascans'`); n != "0" {
		t.Fatal("the Bookmark was not removed")
	}
	a = h.post(c, base+"/restore", form, htmxHeader, "true")
	if a.status != http.StatusOK || a.testid("bookmark").Length() != 1 {
		t.Fatalf("undo answered %d: %s", a.status, a.body)
	}
	if got := h.text(`SELECT progress_num::text FROM bookmarks WHERE site = 'asurascans'`); got != "13.5" {
		t.Errorf("undo restored Progress %s, want 13.5", got)
	}
	// Plain-form remove: home with the Undo at the top.
	a = h.post(c, base+"/remove", nil)
	if a.status != http.StatusSeeOther {
		t.Fatalf("plain remove answered %d", a.status)
	}
	page := h.get(c, a.header.Get("Location"))
	if page.testid("undo").Length() != 1 || page.find(`[data-testid="removed"] input[name=progress]`).AttrOr("value", "") != "13.5" {
		t.Errorf("the plain remove's page has no Undo carrying the Progress")
	}
}

// TestNoReaderReachesAnotherReadersData tries every Reader route that names
// a Bookmark or a token with another Reader's ids: each is refused as if the
// thing did not exist, and the other Reader's rows are unchanged.
func TestNoReaderReachesAnotherReadersData(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	seedReaderRows(h)
	a, b := h.client(readerA), h.client(readerB)
	h.post(a, "/tokens", url.Values{"name": {"A's laptop"}})
	tokenID := h.text(`SELECT id::text FROM reader_tokens WHERE reader_id = $1`, readerA)
	before := h.text(bookmarkQuery) + "\n" + h.text(`SELECT string_agg(id::text || label, ',') FROM reader_tokens`)
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{"/bookmarks/asurascans/nano-machine/progress", url.Values{"num": {"1"}}},
		{"/bookmarks/asurascans/nano-machine/caught-up", nil},
		{"/bookmarks/asurascans/nano-machine/remove", nil},
		{"/tokens/" + tokenID + "/revoke", nil},
	} {
		for _, hx := range []string{"", "true"} {
			if got := h.post(b, tc.path, tc.form, htmxHeader, hx); got.status != http.StatusNotFound {
				t.Errorf("B's POST %s (htmx %q) answered %d, want 404", tc.path, hx, got.status)
			}
		}
	}
	// B's own pages show nothing of A's.
	if page := h.get(b, "/"); page.testid("bookmark").Length() != 0 {
		t.Error("B's list shows A's Bookmarks")
	}
	if page := h.get(b, "/tokens"); page.testid("token").Length() != 0 {
		t.Error("B's tokens page shows A's token")
	}
	// B's restore makes B's own Bookmark, never touches A's row.
	h.post(b, "/bookmarks/asurascans/nano-machine/restore", url.Values{"progress": {"1"}})
	after := h.text(bookmarkQuery)
	if !strings.HasPrefix(after, strings.Split(before, "\n")[0]) || strings.Contains(after, "reader-a asurascans/nano-machine 1\n") {
		t.Errorf("A's rows changed:\nbefore %s\nafter %s", before, after)
	}
	if got := h.text(bookmarkQuery + ` WHERE reader_id = 'reader-a'`); !strings.Contains(before, got) {
		t.Errorf("A's Bookmarks changed: %s", got)
	}
	if h.text(`SELECT count(*)::text FROM reader_tokens`) != "1" {
		t.Error("A's token was revoked by B")
	}
}

func TestATokenIsShownOnceStoredAsItsHMACAndRevocable(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.client(readerA)
	a := h.post(c, "/tokens", url.Values{"name": {"laptop Firefox"}})
	tok := strings.TrimSpace(a.testid("new-token").Text())
	if a.status != http.StatusOK || !strings.HasPrefix(tok, "mbk_") || len(tok) < 4+43 || a.testid("copy-token").Length() != 1 {
		t.Fatalf("create answered %d with %q", a.status, tok)
	}
	m := hmac.New(sha256.New, []byte(testTokenKey))
	m.Write([]byte(tok))
	var stored []byte
	if err := h.pool.QueryRow(context.Background(), `SELECT token_hash FROM reader_tokens`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !hmac.Equal(stored, m.Sum(nil)) {
		t.Error("the stored hash is not HMAC-SHA256 under TOKEN_KEY")
	}
	if strings.Contains(h.text(`SELECT string_agg(t::text, '') FROM reader_tokens t`), tok[4:]) || strings.Contains(h.logs.String(), tok[4:]) {
		t.Error("the token's value is stored or logged")
	}
	page := h.get(c, "/tokens")
	if page.testid("new-token").Length() != 0 || !strings.Contains(page.testid("token").Text(), "laptop Firefox") || !strings.Contains(page.testid("token").Text(), "never used") {
		t.Fatalf("the list: %q (value shown again: %v)", page.testid("token").Text(), page.testid("new-token").Length() != 0)
	}
	if a := h.post(c, "/tokens", url.Values{"name": {"  "}}); a.status != http.StatusBadRequest {
		t.Errorf("an unnamed token answered %d", a.status)
	}
	id := page.testid("token").AttrOr("data-token-id", "")
	if a := h.post(c, "/tokens/"+id+"/revoke", nil); a.status != http.StatusSeeOther {
		t.Fatalf("revoke answered %d", a.status)
	}
	if h.text(`SELECT count(*)::text FROM reader_tokens`) != "0" {
		t.Error("the token survived its revoke")
	}
	if _, err := h.store.ReaderByToken(context.Background(), m.Sum(nil), t0); err == nil {
		t.Error("a revoked token still names its Reader")
	}
}

func TestTheOwnerSignsAReaderInByLinkAndOutEverywhere(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	owner := h.owner()
	a := h.post(owner, "/admin/readers", url.Values{"name": {"Ada"}})
	link := strings.TrimSpace(a.testid("reader-link").Text())
	if a.status != http.StatusOK || !strings.HasPrefix(link, h.srv.URL+"/login/") {
		t.Fatalf("create link answered %d with %q", a.status, link)
	}
	page := h.get(owner, "/admin/readers")
	ada := page.find(`[data-testid="reader"]`).FilterFunction(func(_ int, s *goquery.Selection) bool { return strings.Contains(s.Text(), "Ada") })
	if ada.Length() != 1 || !strings.Contains(ada.Text(), "never signed in") {
		t.Fatalf("Ada before signing in: %q", ada.Text())
	}
	c := anonymous()
	c.Jar, _ = cookiejar.New(nil)
	resp := h.do(c, http.MethodPost, strings.TrimPrefix(link, h.srv.URL), url.Values{})
	if resp.status != http.StatusSeeOther || resp.header.Get("Location") != "/" {
		t.Fatalf("the Reader's link answered %d to %q", resp.status, resp.header.Get("Location"))
	}
	home := h.get(c, "/")
	if home.status != http.StatusOK || !strings.Contains(home.find("header").Text(), "Ada") {
		t.Fatalf("Ada's home: %d %q", home.status, home.find("header").Text())
	}
	if again := h.do(anonymous(), http.MethodPost, strings.TrimPrefix(link, h.srv.URL), url.Values{}); again.status != http.StatusForbidden {
		t.Errorf("a used link answered %d", again.status)
	}
	page = h.get(owner, "/admin/readers")
	ada = page.find(`[data-testid="reader"]`).FilterFunction(func(_ int, s *goquery.Selection) bool { return strings.Contains(s.Text(), "Ada") })
	if !strings.Contains(ada.Text(), "last seen") {
		t.Errorf("Ada after signing in: %q", ada.Text())
	}
	id := ada.AttrOr("data-reader-id", "")
	if a := h.post(owner, "/admin/readers/"+id+"/signout", nil); a.status != http.StatusSeeOther {
		t.Fatalf("sign out answered %d", a.status)
	}
	if a := h.get(c, "/"); a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/login") {
		t.Errorf("Ada's session survived sign-out everywhere: %d", a.status)
	}
	if a := h.post(h.client(readerB), "/admin/readers", url.Values{"name": {"Mallory"}}); a.status != http.StatusForbidden {
		t.Errorf("a Reader made a sign-in link: %d", a.status)
	}
}

func TestTheReaderPagesAnswer503WhileTheDatabaseIsAway(t *testing.T) {
	t.Parallel()
	h, proxy := outageHarness(t)
	c := h.client(readerA)
	h.post(c, "/", url.Values{"urls": {asuraChapter}})
	before := h.snapshot()
	proxy.setDown(true)
	wantUnavailable(t, "GET /", h.get(c, "/"))
	wantUnavailable(t, "an add", h.post(c, "/", url.Values{"urls": {novelChapter}}))
	wantUnavailable(t, "htmx caught up", h.post(c, "/bookmarks/asurascans/nano-machine/caught-up", nil, htmxHeader, "true"))
	wantUnavailable(t, "GET /tokens", h.get(c, "/tokens"))
	// No half download: the export answers the page's 503, not an attachment.
	if a := h.get(c, "/bookmarks/export.json"); a.header.Get("Content-Disposition") != "" {
		t.Fatalf("the export answered an attachment while the database was away: %d %s", a.status, a.body)
	} else {
		wantUnavailable(t, "GET /bookmarks/export.json", a)
	}
	proxy.setDown(false)
	if a := h.get(c, "/"); a.status != http.StatusOK || a.testid("bookmark").Length() != 1 {
		t.Fatalf("after the database came back: %d with %d rows", a.status, a.testid("bookmark").Length())
	}
	if h.snapshot() != before {
		t.Fatal("something changed while the database was away")
	}
}
