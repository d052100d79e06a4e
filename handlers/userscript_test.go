package handlers_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/static"
	"github.com/mangabookmark/mangabookmark/word"
)

// userscriptServer is the real router with only what the userscript's routes
// read: they touch no database and no session.
func userscriptServer(t *testing.T, base string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handlers.NewServer(handlers.Deps{
		Logger: slog.New(slog.DiscardHandler), PublicBaseURL: base,
		SessionKey: []byte("0123456789abcdef0123456789abcdef-test-key"),
	}))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// metaValues reads every value of one metadata key.
func metaValues(block, key string) []string {
	var out []string
	re := regexp.MustCompile(`(?m)^// @` + regexp.QuoteMeta(key) + `(?:[ \t]+(.*?))?[ \t]*$`)
	for _, m := range re.FindAllStringSubmatch(block, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestTheServedMetadataCarriesThePublicBaseURLsHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, base, connect, tokens string
	}{
		{"a public name", "https://bookmarks.example.org", "bookmarks.example.org", "https://bookmarks.example.org/tokens*"},
		{"a LAN IP with a port", "http://192.168.1.10:8080", "192.168.1.10", "http://192.168.1.10/tokens*"},
		{"localhost", "http://localhost:8080/", "localhost", "http://localhost/tokens*"},
		{"an IPv6 loopback", "http://[::1]:8080", "::1", "http://[::1]/tokens*"},
		{"a path prefix and a capitalised host", "https://Example.ORG/mb", "example.org", "https://example.org/mb/tokens*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := userscriptServer(t, tc.base)
			base := strings.TrimRight(tc.base, "/")
			for _, path := range []string{"/userscript/mangabookmark.user.js", "/userscript/mangabookmark.meta.js"} {
				resp, body := get(t, srv.URL+path)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: %d", path, resp.StatusCode)
				}
				if got := metaValues(body, "connect"); !slices.Equal(got, []string{tc.connect}) {
					t.Errorf("%s @connect = %q, want %q", path, got, tc.connect)
				}
				if got := metaValues(body, "downloadURL"); !slices.Equal(got, []string{base + "/userscript/mangabookmark.user.js"}) {
					t.Errorf("%s @downloadURL = %q", path, got)
				}
				if got := metaValues(body, "updateURL"); !slices.Equal(got, []string{base + "/userscript/mangabookmark.meta.js"}) {
					t.Errorf("%s @updateURL = %q", path, got)
				}
				if !slices.Contains(metaValues(body, "match"), tc.tokens) {
					t.Errorf("%s has no @match %s: %q", path, tc.tokens, metaValues(body, "match"))
				}
				if strings.Contains(body, "__") && regexp.MustCompile(`__[A-Z_]+__`).MatchString(body) {
					t.Errorf("%s still holds a marker: %s", path, regexp.MustCompile(`__[A-Z_]+__`).FindString(body))
				}
			}
		})
	}
}

func TestTheUserscriptIsServedAsJavaScriptWithAnETag(t *testing.T) {
	t.Parallel()
	const base = "https://bookmarks.example.org"
	srv := userscriptServer(t, base)
	script, scriptBody := get(t, srv.URL+"/userscript/mangabookmark.user.js")
	meta, metaBody := get(t, srv.URL+"/userscript/mangabookmark.meta.js")
	for _, r := range []*http.Response{script, meta} {
		if ct := r.Header.Get("Content-Type"); ct != "text/javascript; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		if r.Header.Get("ETag") == "" {
			t.Error("no ETag")
		}
	}
	if script.Header.Get("ETag") == meta.Header.Get("ETag") {
		t.Error("the script and its metadata share an ETag")
	}
	if !strings.HasPrefix(scriptBody, metaBody) || !strings.HasSuffix(metaBody, "// ==/UserScript==\n") || len(scriptBody) < 10*len(metaBody) {
		t.Errorf("the .meta.js is not exactly the script's metadata block (%d of %d bytes)", len(metaBody), len(scriptBody))
	}
	again, body := get(t, srv.URL+"/userscript/mangabookmark.user.js", "If-None-Match", script.Header.Get("ETag"))
	if again.StatusCode != http.StatusNotModified || body != "" {
		t.Errorf("a revalidation with the ETag answered %d with %d bytes", again.StatusCode, len(body))
	}
	// The script talks to the server the metadata names.
	quoted, _ := json.Marshal(base)
	if !strings.Contains(scriptBody, "const BASE_URL = "+string(quoted)+";") {
		t.Error("the script's BASE_URL is not the public base URL")
	}
	if got := metaValues(metaBody, "version"); !slices.Equal(got, []string{static.UserscriptVersion()}) || !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(got[0]) {
		t.Errorf("@version %q, want %q", got, static.UserscriptVersion())
	}
}

// The @match lines are the adapters' hosts, current and old, one each: a Site
// that moves gets its new host in both places or this fails.
func TestTheUserscriptMatchesEverySiteHost(t *testing.T) {
	t.Parallel()
	srv := userscriptServer(t, "https://bookmarks.example.org")
	_, meta := get(t, srv.URL+"/userscript/mangabookmark.meta.js")
	var want []string
	for _, site := range word.SiteNames() {
		for _, h := range adapters.Hosts(site) {
			want = append(want, "https://*."+h+"/*")
		}
	}
	want = append(want, "https://bookmarks.example.org/tokens*")
	got := metaValues(meta, "match")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("@match lines\n got %q\nwant %q", got, want)
	}
}

func TestABaseURLThatCannotBeTemplatedIsRefusedNotServedBroken(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"ftp://x.example", "https://", "not a url", "https://a.example/x y"} {
		if _, err := static.RenderUserscript(base); err == nil {
			t.Errorf("RenderUserscript(%q) rendered", base)
		}
	}
	us, err := static.RenderUserscript(`https://a.example/it's"`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(us.Script), `const BASE_URL = "https://a.example/it's\"";`) {
		t.Error("a quote in the base URL is not escaped in the script's string")
	}
}

// The install link is the bare .user.js address: managers offer to install
// only an address that ends so, and a query breaks that.
func TestTheTokensPageLinksTheUserscriptToInstall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.get(h.client("reader-2"), "/tokens")
	if a.status != http.StatusOK {
		t.Fatalf("/tokens answered %d", a.status)
	}
	href := a.testid("install-userscript").AttrOr("href", "")
	if href != "/userscript/mangabookmark.user.js" {
		t.Fatalf("the install link points at %q", href)
	}
	resp, body := get(t, h.srv.URL+href)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "// ==UserScript==") {
		t.Errorf("the install link answers %d, %.40q", resp.StatusCode, body)
	}
}
