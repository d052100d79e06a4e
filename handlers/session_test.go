package handlers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestSafeNextKeepsTheRedirectOnThisSite(t *testing.T) {
	cases := []struct{ next, want string }{
		{"/admin/series?filter=failing", "/admin/series?filter=failing"},
		{"/", "/"},
		{"", "/"},
		{"https://evil.example/", "/"},
		{"//evil.example/", "/"},
		{"/\\evil.example", "/"},
		{"/x\\/evil.example", "/"},
		{"/\t/evil.example", "/"},
		{"/\n/evil.example", "/"},
		{"/\r\n/evil.example", "/"},
		{"/\x00/evil.example", "/"},
		{"/%09/evil.example", "/%09/evil.example"}, // still escaped: a path on this site
		{"javascript:alert(1)", "/"},
		{"admin", "/"},
	}
	for _, tc := range cases {
		if got := safeNext(tc.next); got != tc.want {
			t.Errorf("safeNext(%q) = %q, want %q", tc.next, got, tc.want)
		}
		// What a browser would follow: it drops tabs and newlines and reads
		// a backslash as a slash.
		w := httptest.NewRecorder()
		http.Redirect(w, httptest.NewRequest("GET", "/auth/discord/callback", nil), safeNext(tc.next), http.StatusSeeOther)
		loc := strings.NewReplacer("\t", "", "\n", "", "\r", "", "\\", "/").Replace(w.Header().Get("Location"))
		if !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") {
			t.Errorf("safeNext(%q) redirects a browser to %q", tc.next, loc)
		}
	}
}
