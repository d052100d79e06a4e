package fetch

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/word"
)

// The classification table: what an answer from a Site means, before any parsing.
// The rules are tried in order; the first that matches decides. The same table
// drives classify_test.go, which serves each rule's example from an httptest
// server and reads it through the plain route.

// verdict is what the Poll does with an answer.
type verdict int

const (
	verdictParse    verdict = iota // hand the body to the adapter: ok or no_chapter
	verdictRefused                 // a challenge held, or the Site set its pace (429)
	verdictNotFound                // the page is gone
	verdictErrors                  // a fault on the Site's side or ours
)

func (v verdict) String() string {
	return [...]string{"parse", string(word.Refused), string(word.NotFound), string(word.Errors)}[v]
}

// classRule is one row of the table.
type classRule struct {
	name    string
	match   func(status int, h http.Header, body []byte) bool
	verdict verdict
	// example is an answer the rule must classify; the tests serve it.
	example classExample
}

type classExample struct {
	status int
	header map[string]string
	body   string
}

const exampleSeriesPage = "<html><body><h1>A page</h1></body></html>"

var classification = []classRule{
	{
		name:    "403 with cf-mitigated: challenge is a held challenge",
		match:   func(s int, h http.Header, _ []byte) bool { return s == http.StatusForbidden && cfMitigated(h) },
		verdict: verdictRefused,
		example: classExample{403, map[string]string{"cf-mitigated": "challenge", "Server": "cloudflare"}, "<html><title>Just a moment...</title></html>"},
	},
	{
		name:    "any status with cf-mitigated: challenge is a held challenge",
		match:   func(_ int, h http.Header, _ []byte) bool { return cfMitigated(h) },
		verdict: verdictRefused,
		example: classExample{503, map[string]string{"cf-mitigated": "challenge"}, ""},
	},
	{
		name:    "any status with a challenge interstitial body is a held challenge",
		match:   func(_ int, _ http.Header, b []byte) bool { return isChallengeBody(b) },
		verdict: verdictRefused,
		example: classExample{200, nil, "<!DOCTYPE html><html><head><title>Just a moment...</title></head><body><script>window._cf_chl_opt={cType:'managed'};</script></body></html>"},
	},
	{
		name:    "429 is the Site setting its pace",
		match:   func(s int, _ http.Header, _ []byte) bool { return s == http.StatusTooManyRequests },
		verdict: verdictRefused,
		example: classExample{429, map[string]string{"Retry-After": "120"}, "slow down"},
	},
	{
		name:    "2xx is the page",
		match:   func(s int, _ http.Header, _ []byte) bool { return s >= 200 && s < 300 },
		verdict: verdictParse,
		example: classExample{200, nil, exampleSeriesPage},
	},
	{
		name:    "a plain 403 is an error, not a challenge",
		match:   func(s int, _ http.Header, _ []byte) bool { return s == http.StatusForbidden },
		verdict: verdictErrors,
		example: classExample{403, nil, "<html><body>Forbidden</body></html>"},
	},
	{
		name:    "404 is not found",
		match:   func(s int, _ http.Header, _ []byte) bool { return s == http.StatusNotFound },
		verdict: verdictNotFound,
		example: classExample{404, nil, "<html><body>No such series</body></html>"},
	},
	{
		name:    "any other 4xx (410 gone, 400, 451) is not found",
		match:   func(s int, _ http.Header, _ []byte) bool { return s >= 400 && s < 500 },
		verdict: verdictNotFound,
		example: classExample{410, nil, "gone"},
	},
	{
		name:    "5xx is an error",
		match:   func(s int, _ http.Header, _ []byte) bool { return s >= 500 && s < 600 },
		verdict: verdictErrors,
		example: classExample{503, nil, "<html><body>Service Unavailable</body></html>"},
	},
	{
		name:    "anything else (an unfollowed 3xx, a 1xx) is an error",
		match:   func(int, http.Header, []byte) bool { return true },
		verdict: verdictErrors,
		example: classExample{304, nil, ""},
	},
}

// classify runs the table.
func classify(status int, h http.Header, body []byte) (verdict, string) {
	for _, r := range classification {
		if r.match(status, h, body) {
			return r.verdict, r.name
		}
	}
	return verdictErrors, "unclassified"
}

func cfMitigated(h http.Header) bool {
	return strings.EqualFold(strings.TrimSpace(h.Get("cf-mitigated")), "challenge")
}

// challengeMarkers appear on interstitials only. A bare "challenge-platform"
// script path is deliberately absent: Cloudflare injects that script into
// ordinary pages too, and matching it would call every such page a refusal.
var challengeMarkers = [][]byte{
	[]byte("<title>just a moment...</title>"),
	[]byte("<title>attention required! | cloudflare</title>"),
	[]byte("window._cf_chl_opt"),
	[]byte(`id="challenge-form"`),
	[]byte(`id="cf-challenge-running"`),
	[]byte("cf-browser-verification"),
	[]byte("<title>ddos-guard</title>"),
}

// challengeScan bounds how much of a body is searched: interstitials are small,
// and a real Series page is not searched end to end for every Poll.
const challengeScan = 256 << 10

func isChallengeBody(b []byte) bool {
	if len(b) > challengeScan {
		b = b[:challengeScan]
	}
	lower := bytes.ToLower(b)
	for _, m := range challengeMarkers {
		if bytes.Contains(lower, m) {
			return true
		}
	}
	return false
}

// maxRetryAfter bounds the rest a 429 can ask for.
const maxRetryAfter = time.Hour

// retryAfter reads a Retry-After header (seconds or an HTTP date), bounded to
// [0, maxRetryAfter]. Absent or unreadable is 0: the Lane chooses its own rest.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}
