package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/internal/version"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

var testBuild = version.Info{Version: "v9.8.7", Commit: "c0ffee1234", Date: "2026-12-02T00:00:00Z", GoVersion: "go1.26.0"}

func withBuild(d *handlers.Deps) { d.Build = testBuild }

// probeJSON is a probe's answer read as JSON, failing the test on anything
// else.
func probeJSON(t *testing.T, a answer) map[string]string {
	t.Helper()
	if ct := a.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q; want application/json (body %q)", ct, a.body)
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(a.body), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, a.body)
	}
	return m
}

func wantProbe(t *testing.T, what string, a answer, status int, text string) {
	t.Helper()
	if a.status != status || a.body != text+"\n" || !strings.HasPrefix(a.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("%s: %d %q (%s); want %d %q as text", what, a.status, a.body, a.header.Get("Content-Type"), status, text)
	}
	if a.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%s: Cache-Control %q; a probe's answer must not be cached", what, a.header.Get("Cache-Control"))
	}
}

func TestHealthzAnswersJSONWithTheVersionWhenAskedFor(t *testing.T) {
	t.Parallel()
	h, proxy := outageHarness(t, withBuild)
	wantProbe(t, "healthz as text", h.get(anonymous(), "/healthz"), http.StatusOK, "ok")
	// A browser's Accept names */* too: it still reads text.
	wantProbe(t, "healthz from a browser", h.get(anonymous(), "/healthz", "Accept", "text/html,application/xhtml+xml,*/*;q=0.8"), http.StatusOK, "ok")

	a := h.get(anonymous(), "/healthz", "Accept", "application/json")
	got := probeJSON(t, a)
	if a.status != http.StatusOK || got["status"] != "ok" || got["version"] != "v9.8.7" || got["commit"] != "c0ffee1234" {
		t.Fatalf("healthz as JSON: %d %v", a.status, got)
	}

	proxy.setDown(true)
	wantProbe(t, "healthz as text, database away", h.get(anonymous(), "/healthz"), http.StatusServiceUnavailable, "database unavailable")
	a = h.get(anonymous(), "/healthz", "Accept", "application/json; charset=utf-8")
	got = probeJSON(t, a)
	if a.status != http.StatusServiceUnavailable || got["status"] != "unavailable" || got["version"] != "v9.8.7" {
		t.Fatalf("healthz as JSON, database away: %d %v", a.status, got)
	}
}

// Readiness (issue 25, item 7): a load balancer sends no traffic to a
// replica whose database is away or whose schema is not this binary's.
func TestReadyzIsReadyOnAMigratedDatabase(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withBuild)
	wantProbe(t, "readyz", h.get(anonymous(), "/readyz"), http.StatusOK, "ready")
	a := h.get(anonymous(), "/readyz", "Accept", "application/json")
	if got := probeJSON(t, a); a.status != http.StatusOK || got["status"] != "ready" || got["version"] != "v9.8.7" {
		t.Fatalf("readyz as JSON: %d %v", a.status, got)
	}
	if a := h.do(anonymous(), http.MethodHead, "/readyz", nil); a.status != http.StatusOK {
		t.Fatalf("HEAD /readyz: %d", a.status)
	}
	if a := h.do(anonymous(), http.MethodOptions, "/readyz", nil); a.status != http.StatusNoContent || a.header.Get("Allow") != "GET, HEAD, OPTIONS" {
		t.Fatalf("OPTIONS /readyz: %d, Allow %q", a.status, a.header.Get("Allow"))
	}
}

func TestReadyzIsNotReadyOnADatabaseNotMigrated(t *testing.T) {
	t.Parallel()
	cfg, err := pgxpool.ParseConfig(storetest.EmptyURL(t))
	if err != nil {
		t.Fatal(err)
	}
	store.Tune(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	h := newHarnessOn(t, pool, withBuild)
	// Liveness is not readiness: the process and its database are up.
	wantProbe(t, "healthz", h.get(anonymous(), "/healthz"), http.StatusOK, "ok")
	a := h.get(anonymous(), "/readyz")
	if a.status != http.StatusServiceUnavailable || !strings.HasPrefix(a.body, "migrations not applied: schema 0 of ") {
		t.Fatalf("readyz: %d %q; want 503 saying the migrations have not run", a.status, a.body)
	}
	a = h.get(anonymous(), "/readyz", "Accept", "application/json")
	if got := probeJSON(t, a); a.status != http.StatusServiceUnavailable || got["status"] != "not ready" || !strings.HasPrefix(got["reason"], "migrations not applied") {
		t.Fatalf("readyz as JSON: %d %v", a.status, got)
	}
}

func TestReadyzIsNotReadyWhileTheSchemaIsBehindOrDirty(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.exec(`UPDATE schema_migrations SET version = version - 1`)
	if a := h.get(anonymous(), "/readyz"); a.status != http.StatusServiceUnavailable || !strings.HasPrefix(a.body, "migrations not applied") {
		t.Fatalf("a schema one migration behind: %d %q", a.status, a.body)
	}
	h.exec(`UPDATE schema_migrations SET version = version + 1, dirty = true`)
	if a := h.get(anonymous(), "/readyz"); a.status != http.StatusServiceUnavailable || !strings.HasSuffix(a.body, "did not finish\n") {
		t.Fatalf("a dirty schema: %d %q", a.status, a.body)
	}
	h.exec(`UPDATE schema_migrations SET dirty = false`)
	wantProbe(t, "readyz once clean", h.get(anonymous(), "/readyz"), http.StatusOK, "ready")
}

func TestReadyzIsNotReadyWhileTheDatabaseIsAway(t *testing.T) {
	t.Parallel()
	h, proxy := outageHarness(t)
	wantProbe(t, "readyz", h.get(anonymous(), "/readyz"), http.StatusOK, "ready")
	proxy.setDown(true)
	wantProbe(t, "readyz, database away", h.get(anonymous(), "/readyz"), http.StatusServiceUnavailable, "database unavailable")
	a := h.get(anonymous(), "/readyz", "Accept", "application/json")
	if got := probeJSON(t, a); a.status != http.StatusServiceUnavailable || got["reason"] != "database unavailable" {
		t.Fatalf("readyz as JSON, database away: %d %v", a.status, got)
	}
	proxy.setDown(false)
	wantProbe(t, "readyz, database back", h.get(anonymous(), "/readyz"), http.StatusOK, "ready")
}

// The owner's pages name the build in the footer; a Reader's never do
// (issue 25, item 1).
func TestTheFooterShowsTheVersionToTheOwnerOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withBuild)
	owner, reader := h.owner(), h.client("reader-2")
	const want = "mangabookmark v9.8.7 (c0ffee1234, 2026-12-02T00:00:00Z)"
	for _, p := range []string{"/admin", "/admin/series", "/"} {
		a := h.get(owner, p)
		if got := strings.TrimSpace(a.testid("build").Text()); a.status != http.StatusOK || got != want {
			t.Fatalf("the owner's %s: %d, footer %q; want %q", p, a.status, got, want)
		}
	}
	for _, p := range []string{"/", "/settings", "/tokens"} {
		a := h.get(reader, p)
		if a.status != http.StatusOK || a.testid("build").Length() != 0 || strings.Contains(a.body, "v9.8.7") || strings.Contains(a.body, "c0ffee") {
			t.Fatalf("a Reader's %s: %d; it names the build:\n%s", p, a.status, a.body)
		}
	}
	if a := h.get(anonymous(), "/login"); strings.Contains(a.body, "v9.8.7") {
		t.Fatalf("the sign-in page names the build:\n%s", a.body)
	}
}
