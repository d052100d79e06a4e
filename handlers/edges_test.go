package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/go-chi/chi/v5"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/static"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
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
			asked := m
			if m == http.MethodHead {
				asked = http.MethodGet // HEAD is taken wherever GET is
			}
			if slices.Contains(registered, asked) || router.Match(chi.NewRouteContext(), asked, path) {
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

// fuzzOwner is the server the fuzz targets drive, over a Series healthy
// the owner bookmarks, and the owner's session cookie.
func fuzzOwner(f *testing.F) (handlers.Deps, http.Handler, string) {
	pool := storetest.Pool(f, nil)
	st := store.New(pool)
	storetest.Ensure(f, pool, storetest.Reader{ID: ownerID, Name: "Owner"})
	storetest.Insert(f, pool, storetest.Series{Site: word.Asurascans, ID: "healthy", URL: addr, Title: "Healthy", Kind: word.Asurascans.Kind(), LatestChapter: "12", CheckedAt: t0.Add(-time.Minute)})
	storetest.Insert(f, pool, storetest.Bookmark{Reader: ownerID, Site: word.Asurascans, Series: "healthy", Progress: "2", UpdatedAt: t0.Add(-time.Hour)})
	link, err := handlers.NewLoginLink(context.Background(), st, "http://mb.test", ownerID, t0)
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
	return d, srv, strings.Split(cookie, ";")[0]
}

// fuzzSeeds are the bytes both fuzz targets start from.
var fuzzSeeds = []string{"asurascans", "\xff", "\x00", "\xc0\xaf", "a/b", "%", "..", strings.Repeat("z", 300), "ü", "asurascans:x", ""}

// noServerFault fails t on a 5xx; test read without a Reader configured is
// a deliberate 503.
func noServerFault(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 500 && !strings.Contains(rec.Body.String(), "not available on this server") {
		t.Fatalf("%s: %d %s", what, rec.Code, rec.Body)
	}
}

// FuzzRouteParams puts arbitrary bytes in every parameter of every route
// and in the list's cursor, as the owner: nothing answers 5xx.
func FuzzRouteParams(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	d, srv, cookie := fuzzOwner(f)
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
			req.Header.Set("Cookie", cookie)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			noServerFault(t, method+" "+target, rec)
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

// FuzzFormFields is FuzzRouteParams' twin for form bodies: arbitrary bytes
// in each field of every route that reads a form (the rest of the form one
// it takes), as a field's name, as the whole body, and in the list address
// htmx reports (HX-Current-URL), with and without htmx, as the owner:
// nothing answers 5xx.
func FuzzFormFields(f *testing.F) {
	for _, s := range slices.Concat(fuzzSeeds, []string{"%zz", "a=1;b=2", "/admin/series?q=%00", "urls=%ff&urls=%00"}) {
		f.Add(s)
	}
	_, srv, cookie := fuzzOwner(f)
	f.Fuzz(func(t *testing.T, raw string) {
		send := func(path, body string, header ...string) {
			for _, htmx := range []bool{false, true} {
				req := httptest.NewRequest(http.MethodPost, "http://mb.test"+path, strings.NewReader(body))
				req.Header.Set("Cookie", cookie)
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				if htmx {
					req.Header.Set("HX-Request", "true")
				}
				for i := 0; i+1 < len(header); i += 2 {
					req.Header.Set(header[i], header[i+1])
				}
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				noServerFault(t, fmt.Sprintf("POST %s %.80q (htmx %v)", path, body, htmx), rec)
			}
		}
		for route, valid := range formRoutes {
			if route == "/logout" {
				// A form it takes ends the session every other input is
				// sent with; TestEveryPostRouteIsSortedByWhetherItReadsAForm
				// holds its refusals.
				continue
			}
			path := fill(route, plainParam)
			for field := range valid {
				for _, v := range []string{raw, "asurascans:" + raw, "/admin/series?q=" + raw} {
					form := url.Values{}
					for k, vs := range valid {
						form[k] = vs
					}
					form.Set(field, v)
					send(path, form.Encode())
				}
			}
			send(path, url.Values{raw: {"1"}}.Encode())
			send(path, raw)
		}
		// The owner's add answers with the list htmx says the page shows.
		for _, at := range []string{"/admin/series?q=" + raw, "/admin/series?" + raw, "http://mb.test/admin/series?after=asurascans:" + raw} {
			send("/admin/series", "urls=x", "HX-Current-URL", at)
		}
	})
}

// formRoutes are the browser's POST routes that read a form, each with a
// form it takes; the hostile-form test and FuzzFormFields put bytes in each
// field in turn. A route that takes no field still reads its form (x is
// any field). bodyRoutes read a body of their own kind instead.
var formRoutes = map[string]url.Values{
	"/":                                           {"urls": {addr}},
	"/admin/series":                               {"urls": {addr}},
	"/admin/series/bulk":                          {"action": {"finish"}, "back": {"/admin/series?filter=all"}, "pick": {"asurascans:healthy"}, "step": {"confirm"}, "confirm": {"yes"}},
	"/admin/series/{site}/{id}/finish":            {"step": {"confirm"}, "confirm": {"yes"}},
	"/admin/series/{site}/{id}/delete":            {"step": {"confirm"}, "confirm": {"yes"}},
	"/admin/series/{site}/{id}/address":           {"url": {"https://asurascans.com/comics/x"}},
	"/admin/series/{site}/{id}/latest":            {"num": {"12"}},
	"/admin/series/{site}/{id}/unfinish":          {"x": {"1"}},
	"/admin/series/{site}/{id}/clear-attribution": {"x": {"1"}},
	"/admin/series/{site}/{id}/poll":              {"x": {"1"}},
	"/admin/series/{site}/{id}/test-read":         {"x": {"1"}},
	"/admin/lanes/{site}/poll":                    {"x": {"1"}},
	"/admin/lanes/{site}/pause":                   {"for": {"1h"}},
	"/admin/lanes/{site}/resume":                  {"x": {"1"}},
	"/admin/readers":                              {"name": {"Ada"}},
	"/admin/readers/{id}/remove":                  {"step": {"confirm"}, "confirm": {"yes"}},
	"/bookmarks/{site}/{id}/progress":             {"num": {"3"}},
	"/bookmarks/{site}/{id}/caught-up":            {"x": {"1"}},
	"/bookmarks/{site}/{id}/restore":              {"progress": {"3"}, "progress_url": {addr}},
	"/tokens":                                     {"name": {"phone"}},
	"/settings":                                   {"feed": {"1"}, "digest": {"1"}, "digest_hour": {"8"}, "zone": {"UTC"}},
	"/settings/feed/new":                          {"x": {"1"}},
	"/settings/feed/off":                          {"x": {"1"}},
	"/tokens/{id}/revoke":                         {"x": {"1"}},
	"/bookmarks/{site}/{id}/remove":               {"x": {"1"}},
	"/admin/readers/{id}/link":                    {"x": {"1"}},
	"/admin/readers/{id}/signout":                 {"x": {"1"}},
	"/login/{token}":                              {"x": {"1"}},
	"/logout":                                     {"x": {"1"}},
}

// TestHostileBytesInAFormFieldAnswer400NamingIt sends each form field of
// every route that reads a form with bytes PostgreSQL refuses (a NUL,
// invalid UTF-8) or far too many: each answers 400 naming the field, before
// any SQL reads it (issue 22, item 1).
func TestHostileBytesInAFormFieldAnswer400NamingIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	owner := h.owner()
	for route, valid := range formRoutes {
		path := fill(route, plainParam)
		for field := range valid {
			bad := []string{"\x00", "a\x00b", "\xff", "asurascans:\x00", "/admin/series?q=\x00", "\xc0\xaf"}
			if field != "urls" { // the paste is bounded by its body instead
				bad = append(bad, strings.Repeat("a", 5000))
			}
			for _, v := range bad {
				for _, htmx := range []bool{false, true} {
					form := url.Values{}
					for k, vs := range valid {
						form[k] = vs
					}
					form.Set(field, v)
					var hdr []string
					if htmx {
						hdr = []string{"HX-Request", "true"}
					}
					a := h.post(owner, path, form, hdr...)
					if a.status != http.StatusBadRequest || !strings.Contains(a.body, "The field "+field+" ") {
						t.Errorf("%s %s=%.12q (htmx %v): %d %.300q; want 400 naming the field", path, field, v, htmx, a.status, a.body)
					}
				}
			}
		}
		// A field's name is checked as its value is, and not echoed.
		for _, k := range []string{"\x00", "\xff", strings.Repeat("k", 300)} {
			a := h.post(owner, path, url.Values{k: {"1"}})
			if a.status != http.StatusBadRequest || !strings.Contains(a.body, "A field name in this form") {
				t.Errorf("%s with a field named %.12q: %d %.300q; want 400", path, k, a.status, a.body)
			}
		}
	}
	if strings.Contains(h.logs.String(), "level=ERROR") {
		t.Errorf("hostile form bytes reached an ERROR line:\n%s", h.logs)
	}
}

// TestABulkBackAddressIsHeldToTheAddressRules: the list address the bulk
// form returns to is a query of its own; one holding a NUL once it is
// decoded is dropped for the plain list, never handed to SQL.
func TestABulkBackAddressIsHeldToTheAddressRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	owner := h.owner()
	for _, back := range []string{"/admin/series?q=%00", "/admin/series?q=%FF", "/admin/series?after=asurascans:%00", "/admin/series?q=" + strings.Repeat("a", 2000)} {
		for _, htmx := range []bool{false, true} {
			var hdr []string
			if htmx {
				hdr = []string{"HX-Request", "true"}
			}
			a := h.post(owner, "/admin/series/bulk", url.Values{"action": {"poll"}, "pick": {"asurascans:healthy"}, "back": {back}}, hdr...)
			switch {
			case !htmx && (a.status != http.StatusSeeOther || a.header.Get("Location") != "/admin/series"):
				t.Errorf("back %q: %d to %q; want the poll done and a 303 to the plain list", back, a.status, a.header.Get("Location"))
			case htmx && (a.status != http.StatusOK || !strings.Contains(a.body, "Poll requested for 1 Series")):
				t.Errorf("back %q (htmx): %d %.300q; want the poll done and the plain list", back, a.status, a.body)
			}
		}
	}
	if strings.Contains(h.logs.String(), "level=ERROR") {
		t.Errorf("a hostile back address reached an ERROR line:\n%s", h.logs)
	}
}

// postRaw posts body as a form, byte for byte.
func (h *harness) postRaw(c *http.Client, path, body string, headers ...string) answer {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b), doc: mustDoc(h.t, b)}
}

func mustDoc(t testing.TB, b []byte) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestAMalformedFormIs400AndOnlyAnOversizedOneIs413: a body that is not a
// form is "could not be read", not "too large" (issue 22, item 3).
func TestAMalformedFormIs400AndOnlyAnOversizedOneIs413(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	owner := h.owner()
	for route := range formRoutes {
		path := fill(route, plainParam)
		for _, body := range []string{"urls=%zz", "name=%", "a=1;b=2", "%zz=1"} {
			for _, htmx := range []bool{false, true} {
				var hdr []string
				if htmx {
					hdr = []string{"HX-Request", "true"}
				}
				a := h.postRaw(owner, path, body, hdr...)
				if a.status != http.StatusBadRequest || !strings.Contains(a.body, "form could not be read") || strings.Contains(a.body, "too large") {
					t.Errorf("%s %q (htmx %v): %d %.300q; want 400, the form could not be read", path, body, htmx, a.status, a.body)
				}
			}
		}
		a := h.postRaw(owner, path, "urls="+strings.Repeat("a", 1<<20))
		if a.status != http.StatusRequestEntityTooLarge || !strings.Contains(a.body, "too large") {
			t.Errorf("%s, 1 MiB: %d %.300q; want 413", path, a.status, a.body)
		}
	}
}

// TestAnUnknownPathIs404WhateverTheMethod: a method chi does not know is
// no reason to answer 405 for a path nothing serves (issue 22, item 4).
func TestAnUnknownPathIs404WhateverTheMethod(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	owner := h.owner()
	for _, p := range []string{"/nosuch", "/admin/nosuch", "/tokens/nosuch/x", "/static-nosuch", "/healthz/x"} {
		for _, m := range append(slices.Clone(allMethods), "FOO", "PROPFIND", "BREW") {
			a := h.do(owner, m, p, nil)
			if a.status != http.StatusNotFound || a.header.Get("Allow") != "" || strings.Contains(a.body, "it takes") {
				t.Errorf("%s %s: %d, Allow %q, %.200q; want 404", m, p, a.status, a.header.Get("Allow"), a.body)
			}
		}
	}
	// The owner's paths are behind the owner's gate whatever the method.
	if a := h.do(anonymous(), "FOO", "/admin/nosuch", nil); a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/login") {
		t.Errorf("anonymous FOO /admin/nosuch: %d; want the gate's 303", a.status)
	}
}

// TestAnUnknownMethodOnARouteIs405NamingWhatItTakes: the Allow header and
// the sentence list the route's own methods, HEAD wherever GET is.
func TestAnUnknownMethodOnARouteIs405NamingWhatItTakes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	owner := h.owner()
	for path, allow := range map[string]string{"/admin/series": "GET, HEAD, POST", "/healthz": "GET, HEAD, OPTIONS", "/admin/series/asurascans/x/finish": "POST", "/tokens": "GET, HEAD, POST"} {
		for _, m := range []string{"FOO", http.MethodPut} {
			a := h.do(owner, m, path, nil)
			if a.status != http.StatusMethodNotAllowed || a.header.Get("Allow") != allow || !strings.Contains(a.body, "does not take a "+m+" request") {
				t.Errorf("%s %s: %d, Allow %q, %.200q; want 405, Allow %q", m, path, a.status, a.header.Get("Allow"), a.body, allow)
			}
		}
	}
}

// TestHeadAnswersWhereverGetDoes: every GET route answers HEAD with GET's
// status and headers and no body (issue 22, item 4).
func TestHeadAnswersWhereverGetDoes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	owner := h.owner()
	var paths []string
	for route, ms := range routeTable(t, h.deps) {
		if slices.Contains(ms, http.MethodGet) {
			paths = append(paths, fill(route, plainParam))
		}
		if slices.Contains(ms, http.MethodHead) {
			t.Errorf("HEAD %s is registered itself; every HEAD is routed as GET, so it would never run", route)
		}
	}
	paths = append(paths, static.URL("css/app.css"), "/admin/series?filter=all")
	for _, p := range paths {
		for _, c := range []*http.Client{owner, anonymous()} {
			get, head := h.do(c, http.MethodGet, p, nil), h.do(c, http.MethodHead, p, nil)
			if head.status != get.status || head.body != "" || head.header.Get("Content-Type") != get.header.Get("Content-Type") {
				t.Errorf("HEAD %s: %d %q, %.80q; GET %d %q", p, head.status, head.header.Get("Content-Type"), head.body, get.status, get.header.Get("Content-Type"))
			}
		}
	}
	for _, p := range []string{"/", "/admin/series", static.URL("css/app.css"), "/userscript/mangabookmark.user.js", "/covers/asurascans/healthy"} {
		if a := h.do(owner, http.MethodHead, p, nil); a.status != http.StatusOK {
			t.Errorf("HEAD %s: %d; want 200", p, a.status)
		}
	}
}

// TestEveryAPIRefusalIsJSONWithAWord: under /api/v1 a wrong method, an
// unknown path and a query no route takes answer the API's error shape,
// never the pages' HTML or text (issue 22, item 4).
func TestEveryAPIRefusalIsJSONWithAWord(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedAsura()
	tok := h.apiToken("r1", "phone")
	for _, c := range []struct {
		name, method, path, token string
		status                    int
		word                      string
	}{
		{"a known method a path does not take", http.MethodPost, "/api/v1/me", tok, 405, "method_not_allowed"},
		{"a method chi does not know", "FOO", "/api/v1/me", tok, 405, "method_not_allowed"},
		{"a method chi does not know on a POST path", "FOO", "/api/v1/progress", tok, 405, "method_not_allowed"},
		{"an unknown path", http.MethodGet, "/api/v1/nosuch", tok, 404, "not_found"},
		{"an unknown path with a method chi does not know", "FOO", "/api/v1/nosuch", tok, 404, "not_found"},
		{"a lookup address that is not UTF-8", http.MethodGet, "/api/v1/lookup?url=%ff", tok, 400, "bad_request"},
		{"a lookup address with a NUL", http.MethodGet, "/api/v1/lookup?url=%00", tok, 400, "bad_request"},
		{"a query that cannot be read", http.MethodGet, "/api/v1/lookup?url=%zz", tok, 400, "bad_request"},
		{"a path that is not UTF-8", http.MethodGet, "/api/v1/%ff", tok, 400, "bad_request"},
		{"a method chi does not know, without a token", "FOO", "/api/v1/me", "", 401, "token_missing"},
	} {
		hdr := []string{}
		if c.token != "" {
			hdr = []string{"Authorization", "Bearer " + c.token}
		}
		a := h.do(anonymous(), c.method, c.path, nil, hdr...)
		var body struct{ Error, Message string }
		err := json.Unmarshal([]byte(a.body), &body)
		if a.status != c.status || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") || err != nil || body.Error != c.word || body.Message == "" {
			t.Errorf("%s: %d %q %.200q; want %d JSON with %q", c.name, a.status, a.header.Get("Content-Type"), a.body, c.status, c.word)
		}
		if c.status == 405 && !strings.Contains(a.header.Get("Allow"), "GET") && !strings.Contains(a.header.Get("Allow"), "POST") {
			t.Errorf("%s: Allow %q", c.name, a.header.Get("Allow"))
		}
	}
	// HEAD is GET without the body here too.
	if a := h.do(anonymous(), http.MethodHead, "/api/v1/me", nil, "Authorization", "Bearer "+tok); a.status != http.StatusOK || a.body != "" {
		t.Errorf("HEAD /api/v1/me: %d %q", a.status, a.body)
	}
}
