// Package metrics is what GET /metrics serves in the Prometheus text format
// (issue 25, item 5): the registry, the request-side collectors (requests by
// route pattern, statements per request, the userscript versions the API
// sees), the connection pools read at scrape time, and (domain.go) the
// Lanes' and the notices' own figures.
//
// Every collector is registered on a registry passed in, never on
// prometheus.DefaultRegisterer: the server makes one registry, and each test
// its own, so tests run in parallel. Every label set is bounded: a route is
// the router's pattern, never the raw path, and a value a client sends is
// folded into "other" unless it is one of a known few. The metric names are
// a public interface (docs/adr/0028).
package metrics

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mangabookmark/mangabookmark/word"
)

// namespace begins every metric name of ours.
const namespace = "mangabookmark"

// Other is the label value every unknown value a client sends folds into.
const Other = "other"

// NewRegistry is a registry with the Go runtime's and the process's
// collectors; the server's and the tests' collectors go on it.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves g in the Prometheus text format. With token set it answers
// only a request carrying "Authorization: Bearer <token>", and any other a
// bare 401 that says nothing of why; the comparison takes the same time
// whatever was sent, and the handler keeps only the token's hash.
func Handler(g prometheus.Gatherer, token word.Secret) http.Handler {
	h := promhttp.HandlerFor(g, promhttp.HandlerOpts{})
	if !token.Set() {
		return h
	}
	want := sha256.Sum256([]byte("Bearer " + token.Reveal()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Hashing first makes the compare constant-time in the length too.
		got := sha256.Sum256([]byte(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// HTTP holds the request-side collectors. A nil *HTTP counts nothing, so
// a server without metrics calls the same methods.
type HTTP struct {
	requests   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	statements *prometheus.HistogramVec
	userscript *prometheus.CounterVec
	versions   map[string]bool
}

// statementBuckets fit a page's few statements (the owner's pages run at
// most 9, handlers/statements_test.go) and show a page that starts to run
// one per row.
var statementBuckets = []float64{0, 1, 2, 3, 5, 8, 13, 21, 34, 55}

// NewHTTP registers the request-side collectors on reg. versions are the
// userscript versions ever released (static.UserscriptVersions): the only
// ones counted by their own label.
func NewHTTP(reg prometheus.Registerer, versions []string) *HTTP {
	h := &HTTP{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "http_requests_total",
			Help: "HTTP requests answered, by route pattern (\"unmatched\" for a path no route serves), method and status code.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "http_request_duration_seconds",
			Help:    "Time from a request's arrival to its answer's end, by route pattern and method.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method"}),
		statements: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "http_request_statements",
			Help:    "Statements one request sent PostgreSQL (the request log line's statements=), by route pattern and method.",
			Buckets: statementBuckets,
		}, []string{"route", "method"}),
		userscript: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "userscript_requests_total",
			Help: "API requests that named their userscript version (X-Userscript-Version), by version; a version never released is \"other\".",
		}, []string{"version"}),
		versions: map[string]bool{},
	}
	for _, v := range versions {
		h.versions[v] = true
	}
	reg.MustRegister(h.requests, h.duration, h.statements, h.userscript)
	return h
}

// Request counts one answered request. route is the router's pattern;
// status 0 is the 200 net/http sends for a handler that wrote nothing.
func (h *HTTP) Request(route, method string, status int, took time.Duration, statements int) {
	if h == nil {
		return
	}
	if status == 0 {
		status = http.StatusOK
	}
	m := Method(method)
	h.requests.WithLabelValues(route, m, strconv.Itoa(status)).Inc()
	h.duration.WithLabelValues(route, m).Observe(took.Seconds())
	h.statements.WithLabelValues(route, m).Observe(float64(statements))
}

// Userscript counts one API request from a userscript that said its version.
func (h *HTTP) Userscript(version string) {
	if h == nil {
		return
	}
	if !h.versions[version] {
		version = Other
	}
	h.userscript.WithLabelValues(version).Inc()
}

// Method is a request's method as a label: the methods HTTP defines, and
// "other" for whatever else a client may send.
func Method(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return Other
}
