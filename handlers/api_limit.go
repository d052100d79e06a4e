package handlers

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// rateLimiter is a token bucket per API token: perMinute writes at once, then
// perMinute a minute. It lives in the process: with several replicas each
// keeps its own count, which bounds a token at perMinute per replica — the
// limit protects the server from a runaway script, not a quota.
type rateLimiter struct {
	mu        sync.Mutex
	perMinute float64
	buckets   map[int64]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newRateLimiter(perMinute int) *rateLimiter {
	return &rateLimiter{perMinute: float64(perMinute), buckets: map[int64]*bucket{}}
}

// take spends one write of token id; when none is left it answers how many
// whole seconds until one is.
func (l *rateLimiter) take(id int64, now time.Time) (retryAfter int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	perSecond := l.perMinute / 60
	b := l.buckets[id]
	if b == nil {
		if len(l.buckets) > 10_000 {
			l.prune(now)
		}
		b = &bucket{tokens: l.perMinute, at: now}
		l.buckets[id] = b
	}
	if elapsed := now.Sub(b.at).Seconds(); elapsed > 0 {
		b.tokens = math.Min(l.perMinute, b.tokens+elapsed*perSecond)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return max(1, int(math.Ceil((1-b.tokens)/perSecond))), false
}

// prune forgets buckets that have refilled: they hold nothing to remember.
func (l *rateLimiter) prune(now time.Time) {
	for id, b := range l.buckets {
		if now.Sub(b.at) > time.Minute {
			delete(l.buckets, id)
		}
	}
}

// userscriptVersion tells a userscript that sends X-Userscript-Version
// whether a newer one is served: X-Userscript-Latest names it and
// X-Userscript-Update-Available says true or false. Managers update late or
// never (Greasemonkey 4), so the panel shows it. The version is counted for
// /metrics too, so the owner sees which scripts are still out there.
func (api *apiServer) userscriptVersion(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent, latest := strings.TrimSpace(r.Header.Get("X-Userscript-Version")), api.d.UserscriptVersion
		if sent != "" {
			api.d.Metrics.Userscript(sent) // a version never released is "other"
		}
		if sent != "" && latest != "" {
			w.Header().Set("X-Userscript-Latest", latest)
			w.Header().Set("X-Userscript-Update-Available", strconv.FormatBool(versionBefore(sent, latest)))
		}
		next.ServeHTTP(w, r)
	})
}

// versionBefore reports whether version a (MAJOR.MINOR.PATCH) is older than
// b. A version that does not read as numbers is older than any: a script
// that cannot say what it is should update.
func versionBefore(a, b string) bool {
	pa, okA := versionParts(a)
	pb, okB := versionParts(b)
	if !okB {
		return false
	}
	if !okA {
		return true
	}
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func versionParts(v string) ([3]int, bool) {
	var out [3]int
	parts := strings.Split(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".")
	if len(parts) == 0 || len(parts) > 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}
