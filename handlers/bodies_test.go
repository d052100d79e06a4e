package handlers_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// hostileBody is a POST body no page here sends, and the status every
// route that reads a form answers it with.
type hostileBody struct {
	name, contentType, body string
	status                  int
}

var hostileBodies = []hostileBody{
	{"a NUL in a field", formType, "x=a%00b", http.StatusBadRequest},
	{"a raw byte that is not UTF-8", formType, "\xff", http.StatusBadRequest},
	{"a malformed escape", formType, "%zz", http.StatusBadRequest},
	{"a 3 MiB form", formType, "x=" + strings.Repeat("a", 3<<20), http.StatusRequestEntityTooLarge},
	{"3 MiB that is not a form", "application/octet-stream", strings.Repeat("a", 3<<20), http.StatusUnsupportedMediaType},
}

const formType = "application/x-www-form-urlencoded"

// bodyRoutes read a body of their own kind, not a form (a push
// subscription's JSON, the import's multipart file): a hostile form is
// refused by that reader, with a status of its own, and changes nothing.
var bodyRoutes = []string{"/push/subscriptions", "/push/subscriptions/delete", "/bookmarks/import"}

// bodyWorld is a server where every POST route has something to act on:
// the owner's Bookmark, token and feed address; a Reader signed in by link,
// with a token; an unspent sign-in link.
type bodyWorld struct {
	h                       *harness
	owner, reader           *http.Client
	readerID, tokenID, link string
	ownerToken, readerToken string
	feed                    string
}

func newBodyWorld(t *testing.T) *bodyWorld {
	h := newHarness(t)
	h.seed(dataset)
	w := &bodyWorld{h: h, owner: h.owner()}
	storetest.Insert(t, h.pool, storetest.Bookmark{Reader: ownerID, Site: word.Asurascans, Series: "healthy", Progress: "2", UpdatedAt: t0})
	// A Reader the owner named, as the owner does: the id is the server's.
	if a := h.post(w.owner, "/admin/readers", url.Values{"name": {"Ada"}}); a.status != http.StatusOK {
		t.Fatalf("naming a Reader: %d", a.status)
	}
	w.readerID = h.text(`SELECT discord_id FROM readers WHERE name = 'Ada'`)
	w.reader = h.client(w.readerID)
	w.readerToken = h.apiToken(w.readerID, "phone")
	w.ownerToken = h.apiToken(ownerID, "laptop")
	w.tokenID = h.text(`SELECT id::text FROM reader_tokens WHERE reader_id = $1`, ownerID)
	w.feed = h.feedFor(ownerID)
	link, err := handlers.NewLoginLink(context.Background(), h.store, h.srv.URL, "r1", t0)
	if err != nil {
		t.Fatal(err)
	}
	w.link = strings.TrimPrefix(link, h.srv.URL+"/login/")
	return w
}

// param fills a route's parameters with a thing of this world that the
// route would change.
func (w *bodyWorld) param(route string) func(string) string {
	return func(name string) string {
		switch {
		case name == "token":
			return w.link
		case name == "id" && strings.HasPrefix(route, "/tokens/"):
			return w.tokenID
		case name == "id" && strings.HasPrefix(route, "/admin/readers/"):
			return w.readerID
		}
		return plainParam(name)
	}
}

// unchanged lists what a refused POST changed: the database, anyone's
// session, token or feed address.
func (w *bodyWorld) unchanged(before string) []string {
	h := w.h
	var changed []string
	if h.wholeDatabase() != before {
		changed = append(changed, "the database")
	}
	for who, c := range map[string]*http.Client{"the owner": w.owner, "the Reader": w.reader} {
		if a := h.get(c, "/"); a.status != http.StatusOK {
			changed = append(changed, who+"'s session (GET / answered "+http.StatusText(a.status)+")")
		}
	}
	for who, tok := range map[string]string{"the owner": w.ownerToken, "the Reader": w.readerToken} {
		if a := h.api(http.MethodGet, "/api/v1/me", tok, ""); a.status != http.StatusOK {
			changed = append(changed, who+"'s token")
		}
	}
	if a := h.get(anonymous(), "/feeds/"+w.feed+".atom"); a.status != http.StatusOK {
		changed = append(changed, "the owner's feed address")
	}
	if h.count(`SELECT count(*) FROM bookmarks WHERE reader_id = $1 AND series_id = 'healthy'`, ownerID) != 1 {
		changed = append(changed, "the owner's Bookmark")
	}
	return changed
}

// TestEveryPostRouteIsSortedByWhetherItReadsAForm walks the router's own
// routes: every POST outside the token API reads its body through the one
// form reader (bodyRoutes through a reader of their own kind), so each
// hostile body is refused with a sentence and changes nothing. A new route
// is in the walk whether or not anyone lists it; formRoutes must hold it
// too, so the field tests reach it.
func TestEveryPostRouteIsSortedByWhetherItReadsAForm(t *testing.T) {
	t.Parallel()
	w := newBodyWorld(t)
	posts := postRoutes(t, w.h.deps)
	if len(posts) < 30 {
		t.Fatalf("walked only %d POST routes: %v", len(posts), posts)
	}
	for _, route := range posts {
		if _, ok := formRoutes[route]; !ok && !slices.Contains(bodyRoutes, route) {
			t.Errorf("POST %s is in neither formRoutes nor bodyRoutes", route)
		}
		for _, b := range hostileBodies {
			for _, htmx := range []bool{false, true} {
				if !w.refuses(t, route, b, htmx) {
					w.noErrorLine(t)
					w = newBodyWorld(t) // the next try starts whole
				}
			}
		}
	}
	// The link no refused post spent still signs in.
	jar, _ := cookiejar.New(nil)
	c := anonymous()
	c.Jar = jar
	if a := w.h.post(c, "/login/"+w.link, nil); a.status != http.StatusSeeOther {
		t.Errorf("the sign-in link after the refused posts: %d; want it unspent", a.status)
	}
	w.noErrorLine(t)
}

// postRoutes are the router's own POST routes outside the token API, in
// order.
func postRoutes(t *testing.T, d handlers.Deps) []string {
	var posts []string
	for route, ms := range routeTable(t, d) {
		if slices.Contains(ms, http.MethodPost) {
			posts = append(posts, route)
		}
	}
	slices.Sort(posts)
	return posts
}

// refuses posts b to route as the owner and reports whether nothing
// changed; a refusal that is not the form reader's is an error too.
func (w *bodyWorld) refuses(t *testing.T, route string, b hostileBody, htmx bool) bool {
	t.Helper()
	path := fill(route, w.param(route))
	before := w.h.wholeDatabase()
	hdr := []string{"Content-Type", b.contentType}
	if htmx {
		hdr = append(hdr, "HX-Request", "true")
	}
	a := w.h.postRaw(w.owner, path, b.body, hdr...)
	refused := a.status == b.status && strings.Contains(a.body, "Nothing was")
	if slices.Contains(bodyRoutes, route) {
		refused = a.status >= 400 && a.status < 500 && a.status != http.StatusNotFound
	}
	if !refused {
		t.Errorf("POST %s, %s (htmx %v): %d %.200q; want %d and a sentence", path, b.name, htmx, a.status, a.body, b.status)
	}
	if changed := w.unchanged(before); len(changed) > 0 {
		t.Errorf("POST %s, %s (htmx %v) changed %s", path, b.name, htmx, strings.Join(changed, ", "))
		return false
	}
	return true
}

func (w *bodyWorld) noErrorLine(t *testing.T) {
	t.Helper()
	if strings.Contains(w.h.logs.String(), "level=ERROR") {
		t.Errorf("a refused request wrote an ERROR line:\n%s", w.h.logs)
	}
}

// wholeDatabase is every row of every table, as text: a refused request
// changes none of them. One statement reads them all (names from the
// catalogue, never from input).
func (h *harness) wholeDatabase() string {
	h.t.Helper()
	ctx := context.Background()
	rows, err := h.pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)
	if err != nil {
		h.t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		h.t.Fatal(err)
	}
	parts := make([]string, len(tables))
	for i, name := range tables {
		parts[i] = `(SELECT '` + name + `' || E'\n' || coalesce(string_agg(t::text, E'\n' ORDER BY t::text), '') FROM ` + pgx.Identifier{name}.Sanitize() + ` t)`
	}
	var s string
	if err := h.pool.QueryRow(ctx, `SELECT `+strings.Join(parts, ` || E'\n--\n' || `)).Scan(&s); err != nil {
		h.t.Fatal(err)
	}
	return s
}

// TestARefusedRowControlOnARemovedBookmarkIsItsRefusal: a change refused
// on a row already removed (htmx asks for the row back) answers the
// refusal it does without htmx, never a 500 from reading the row.
func TestARefusedRowControlOnARemovedBookmarkIsItsRefusal(t *testing.T) {
	t.Parallel()
	w := newBodyWorld(t)
	if a := w.h.post(w.owner, "/bookmarks/asurascans/healthy/remove", nil); a.status != http.StatusSeeOther {
		t.Fatalf("remove: %d", a.status)
	}
	for _, c := range []struct{ path, field, value string }{
		{"/bookmarks/asurascans/healthy/progress", "num", "a/b"},
		{"/bookmarks/asurascans/healthy/restore", "progress", "zz"},
	} {
		form := url.Values{c.field: {c.value}}
		plain, htmx := w.h.post(w.owner, c.path, form), w.h.post(w.owner, c.path, form, "HX-Request", "true")
		if plain.status != http.StatusBadRequest || htmx.status != plain.status || htmx.find(`[data-testid="message"]`).Length() != 1 || strings.Contains(htmx.body, "could not be read just now") {
			t.Errorf("POST %s %s=%s: %d, with htmx %d %.200q; want the same 400 with its message", c.path, c.field, c.value, plain.status, htmx.status, htmx.body)
		}
	}
	w.noErrorLine(t)
}
