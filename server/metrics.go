package server

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/internal/metrics"
	"github.com/mangabookmark/mangabookmark/static"
	"github.com/mangabookmark/mangabookmark/store"
)

// listenMetrics takes METRICS_ADDR beside LISTEN_ADDR, so a busy address
// stops the start before anything else; nil when it is unset.
func listenMetrics(cfg Config) (net.Listener, error) {
	if cfg.MetricsAddr == "" {
		return nil, nil
	}
	return listenAs("METRICS_ADDR", cfg.MetricsAddr)
}

// newMetrics puts the requests (counted into deps.Metrics) and both pools,
// read at each scrape, on reg: the server's one registry, nil when metrics
// are off. The pages serve it at /metrics when only METRICS_TOKEN is set;
// with METRICS_ADDR set, serveMetrics does, there alone.
func newMetrics(cfg Config, reg *prometheus.Registry, st *store.Store, deps *handlers.Deps) {
	if reg == nil {
		return
	}
	deps.Metrics = metrics.NewHTTP(reg, static.UserscriptVersions())
	reg.MustRegister(metrics.NewPools(map[string]metrics.Pool{"pages": st.Pool(), "lanes": st.Lanes().Pool()}))
	if cfg.MetricsToken.Set() && cfg.MetricsAddr == "" {
		deps.MetricsHandler = metrics.Handler(reg, cfg.MetricsToken)
	}
}

// serveMetrics says where /metrics is served, in one line that names the
// token's variable and never its value, and serves it on ln (METRICS_ADDR)
// until ctx ends; stop waits for that listener to close. ln nil: nothing
// of its own to serve.
func serveMetrics(ctx context.Context, ln net.Listener, cfg Config, reg prometheus.Gatherer, log *slog.Logger) (stop func()) {
	auth := "none"
	if cfg.MetricsToken.Set() {
		auth = "bearer METRICS_TOKEN"
	}
	if ln == nil {
		if cfg.MetricsOn() {
			log.Info("metrics served", "at", cfg.PublicBaseURL+"/metrics", "auth", auth)
		}
		return func() {}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.Handler(reg, cfg.MetricsToken))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	log.Info("metrics served", "at", "http://"+ln.Addr().String()+"/metrics", "auth", auth)
	return func() {
		shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutCtx)
		<-done
	}
}
