package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The standard check compares hosts only; an Origin is compared whole
// against PUBLIC_BASE_URL: scheme, host and port.
func TestAnOriginDifferingInSchemeOrPortIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	owner := h.owner()
	u, _ := url.Parse(h.srv.URL) // http://127.0.0.1:PORT
	before := h.snapshot()
	for _, o := range []string{
		"https://" + u.Host,                // the wrong scheme
		"http://" + u.Hostname() + ":1",    // the wrong port
		"http://" + u.Hostname(),           // the wrong port (80)
		"https://" + u.Hostname() + ":443", // both
		"null",                             // an opaque origin
		"http://localhost:" + u.Port(),     // another name for the same host
	} {
		a := h.post(owner, "/admin/lanes/asurascans/poll", nil, "Origin", o)
		if a.status != http.StatusForbidden || !strings.Contains(a.body, "Cross-origin request refused.") {
			t.Errorf("Origin %s: %d %q; want 403", o, a.status, a.body)
		}
	}
	if h.snapshot() != before {
		t.Fatal("a refused request changed something")
	}
	// The server's own origin passes.
	if a := h.post(owner, "/admin/lanes/asurascans/poll", nil, "Origin", h.srv.URL); a.status != http.StatusSeeOther {
		t.Errorf("same-origin POST: %d", a.status)
	}
	// Reads are not state changes.
	if a := h.get(owner, "/admin/lanes", "Origin", "https://"+u.Host); a.status != http.StatusOK {
		t.Errorf("a GET with another Origin: %d", a.status)
	}
}
