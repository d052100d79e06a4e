package handlers

import (
	"crypto/hmac"
	"crypto/sha256"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/sessions"
)

const (
	sessionName = "mb_session"
	oauthName   = "mb_oauth"
	sessionAge  = 30 * 24 * 3600
)

// newCookieStore derives the signing and encryption keys from SESSION_KEY.
func newCookieStore(key []byte, secure bool) *sessions.CookieStore {
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(label))
		return m.Sum(nil)
	}
	cs := sessions.NewCookieStore(derive("mangabookmark session hash"), derive("mangabookmark session block"))
	cs.Options = &sessions.Options{
		Path:     "/",
		MaxAge:   sessionAge,
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteLaxMode,
	}
	return cs
}

// safeNext keeps a post-sign-in redirect on this site: a local absolute path only.
// No control character and no backslash anywhere: browsers drop tabs and
// newlines from a Location and read a backslash as "/", so
// "/<TAB>/evil.example" or "/\evil.example" would leave the site.
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		return "/"
	}
	for _, c := range next {
		if c < 0x20 || c == 0x7f {
			return "/"
		}
	}
	if u, err := url.Parse(next); err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}
