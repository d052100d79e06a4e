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
// Browsers drop tabs and newlines from a Location and read a backslash as "/", so
// "/\t/evil.example" would leave as "//evil.example": any control character
// or backslash, anywhere, sends the Reader home instead.
func safeNext(next string) string {
	if next == "" || next[0] != '/' || strings.HasPrefix(next, "//") ||
		strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return "/"
	}
	if u, err := url.Parse(next); err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}
