package fetch

import (
	"net/http"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
)

// FuzzRetryAfter: a Site's Retry-After header, whatever it holds, is a rest
// within [0, maxRetryAfter].
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "-5", "86400", "99999999999999999999", "Wed, 21 Oct 2026 07:28:00 GMT", "soon", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d := retryAfter(http.Header{"Retry-After": {v}}, now)
		if d < 0 || d > maxRetryAfter {
			t.Fatalf("retryAfter(%q) = %v, outside [0, %v]", v, d, maxRetryAfter)
		}
	})
}

// FuzzParseBaseURLs: SITE_BASE_URLS is refused or yields only known Sites
// with bare scheme://host[:port] bases.
func FuzzParseBaseURLs(f *testing.F) {
	f.Add("asurascans=http://127.0.0.1:9001,kagane=https://mirror.lan:8443")
	f.Add("asurascans=http://x/y")
	f.Add("=,=,")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseBaseURLs(s)
		if err != nil {
			return
		}
		for site, u := range m {
			if _, ok := adapters.ByName(site); !ok || u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Fatalf("%q → %s=%v", s, site, u)
			}
		}
	})
}
