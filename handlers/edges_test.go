package handlers_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// routeTable is every (pattern → methods) the router registers, outside the
// token API (its own surface, with its own JSON 405).
func routeTable(t testing.TB, d handlers.Deps) map[string][]string {
	t.Helper()
	table := map[string][]string{}
	if err := chiWalk(handlers.Routes(d), func(method, route string) {
		if strings.HasPrefix(route, "/api/") {
			return
		}
		table[route] = append(table[route], method)
	}); err != nil {
		t.Fatal(err)
	}
	return table
}

// fill fills a pattern's parameters with p.
func fill(route string, p func(name string) string) string {
	var out []string
	for _, seg := range strings.Split(route, "/") {
		switch {
		case strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}"):
			seg = p(strings.Trim(seg, "{}"))
		case seg == "*":
			seg = p("*")
		}
		out = append(out, seg)
	}
	return strings.Join(out, "/")
}

func plainParam(name string) string {
	return map[string]string{"site": "asurascans", "id": "healthy", "token": "not-a-token", "*": "x"}[name]
}

var allMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions}

func gated(route string) bool {
	return strings.HasPrefix(route, "/admin") || route == "/" || strings.HasPrefix(route, "/tokens") || strings.HasPrefix(route, "/settings") ||
		strings.HasPrefix(route, "/bookmarks/") || strings.HasPrefix(route, "/push/")
}

func TestEveryRouteAnswersEveryWrongMethodWith405AfterItsGate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	owner := h.owner()
	router := handlers.Routes(h.deps)
	table := routeTable(t, h.deps)
	if len(table) < 20 {
		t.Fatalf("walked only %d routes", len(table))
	}
	for route, registered := range table {
		path := fill(route, plainParam)
		for _, m := range allMethods {
			if slices.Contains(registered, m) || router.Match(chi.NewRouteContext(), m, path) {
				continue // taken by this route, or by another (POST /login/discord is /login/{token})
			}
			if gated(route) {
				// The gate comes first: an anonymous visitor is sent to sign in.
				a := h.do(anonymous(), m, path, nil)
				if a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/login") {
					t.Errorf("anonymous %s %s: %d; want the gate's 303 before any 405", m, path, a.status)
				}
			}
			a := h.do(owner, m, path, nil)
			allow := a.header.Get("Allow")
			if a.status != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %d; want 405", m, path, a.status)
				continue
			}
			for _, r := range registered {
				if !strings.Contains(allow, r) {
					t.Errorf("%s %s: Allow %q lacks %s", m, path, allow, r)
				}
			}
			if m != http.MethodHead && !strings.Contains(a.body, "does not take a "+m+" request") {
				t.Errorf("%s %s: body %q; want a sentence", m, path, a.body)
			}
		}
	}
}

func TestHealthzAnswersHeadAndOptions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if a := h.do(anonymous(), http.MethodHead, "/healthz", nil); a.status != http.StatusOK {
		t.Errorf("HEAD /healthz: %d", a.status)
	}
	a := h.do(anonymous(), http.MethodOptions, "/healthz", nil)
	if a.status != http.StatusNoContent || !strings.Contains(a.header.Get("Allow"), "HEAD") {
		t.Errorf("OPTIONS /healthz: %d, Allow %q", a.status, a.header.Get("Allow"))
	}
}

func TestHostileBytesInAPathOrCursorAnswer400BeforeSQL(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	owner := h.owner()
	for _, p := range []string{
		"/admin/series/asurascans/%FF", "/admin/series/asurascans/%00",
		"/admin/series/%C0%AF/x", "/admin/series/asurascans/x%00y/finish",
		"/admin/series?filter=all&after=asurascans:%FF", "/admin/series?after=%00",
		"/admin/lanes/%FF/poll", "/admin/series/asurascans/" + strings.Repeat("a", 300),
	} {
		method := http.MethodGet
		if strings.HasSuffix(p, "/finish") || strings.HasSuffix(p, "/poll") {
			method = http.MethodPost
		}
		a := h.do(owner, method, p, url.Values{})
		if a.status != http.StatusBadRequest || !strings.Contains(a.body, "This address") {
			t.Errorf("%s %s: %d %q; want 400 with a sentence", method, p, a.status, a.body)
		}
	}
	if strings.Contains(h.logs.String(), "level=ERROR") {
		t.Errorf("hostile bytes reached an ERROR line:\n%s", h.logs)
	}
}

// FuzzRouteParams puts arbitrary bytes in every parameter of every route
// and in the list's cursor, as the owner: nothing answers 5xx.
func FuzzRouteParams(f *testing.F) {
	for _, s := range []string{"asurascans", "\xff", "\x00", "\xc0\xaf", "a/b", "%", "..", strings.Repeat("z", 300), "ü", "asurascans:x", ""} {
		f.Add(s)
	}
	st := store.New(storetest.Pool(f, nil))
	ctx := context.Background()
	link, err := handlers.NewLoginLink(ctx, st, "http://mb.test", ownerID, t0)
	if err != nil {
		f.Fatal(err)
	}
	d := handlers.Deps{Store: st, Logger: slog.New(slog.DiscardHandler), PublicBaseURL: "http://mb.test",
		Now: func() time.Time { return t0 }, OwnerID: ownerID, SessionKey: []byte("0123456789abcdef0123456789abcdef-test-key")}
	srv := handlers.NewServer(d)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, strings.TrimPrefix(link, "http://mb.test"), nil))
	cookie := rec.Header().Get("Set-Cookie")
	if rec.Code != http.StatusSeeOther || cookie == "" {
		f.Fatalf("sign-in: %d", rec.Code)
	}
	table := routeTable(f, d)
	f.Fuzz(func(t *testing.T, raw string) {
		esc := url.PathEscape(raw)
		send := func(method, target string) {
			req := httptest.NewRequest(method, "http://mb.test/", nil)
			req.URL.RawQuery = ""
			u, err := url.Parse("http://mb.test" + target)
			if err != nil {
				return // not an address a client could send
			}
			req.URL = u
			req.RequestURI = u.RequestURI()
			req.Header.Set("Cookie", strings.Split(cookie, ";")[0])
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			// Test read without a Reader configured is a deliberate 503.
			if rec.Code >= 500 && !strings.Contains(rec.Body.String(), "not available on this server") {
				t.Fatalf("%s %s: %d %s", method, target, rec.Code, rec.Body)
			}
		}
		for route, ms := range table {
			if !strings.Contains(route, "{") {
				continue
			}
			for _, m := range ms {
				send(m, fill(route, func(string) string { return esc }))
			}
		}
		send(http.MethodGet, "/admin/series?filter=all&after="+url.QueryEscape(raw))
		send(http.MethodGet, "/admin/series?filter=all&after=asurascans:"+url.QueryEscape(raw))
	})
}
