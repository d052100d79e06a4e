package handlers_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// dbProxy stands between the server and PostgreSQL on loopback, so a test
// can take the database away (every session cut, every new one refused)
// and bring it back.
type dbProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns []net.Conn
}

func newDBProxy(t *testing.T, target string) *dbProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dbProxy{ln: ln, target: target}
	t.Cleanup(func() {
		ln.Close()
		p.setDown(true)
	})
	go p.serve()
	return p
}

func (p *dbProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		if !down {
			p.conns = append(p.conns, c)
		}
		p.mu.Unlock()
		if down {
			c.Close() // the database is away: the session ends before it starts
			continue
		}
		go func() {
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				return
			}
			p.mu.Lock()
			p.conns = append(p.conns, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			_, _ = io.Copy(c, up)
			c.Close()
		}()
	}
}

// setDown takes the database away (true) or brings it back (false).
func (p *dbProxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// outageHarness is the real router whose database sits behind a dbProxy.
func outageHarness(t *testing.T, adjust ...func(*handlers.Deps)) (*harness, *dbProxy) {
	t.Helper()
	var proxy *dbProxy
	pool := storetest.Pool(t, func(c *pgxpool.Config) {
		proxy = newDBProxy(t, net.JoinHostPort(c.ConnConfig.Host, strconv.Itoa(int(c.ConnConfig.Port))))
		a := proxy.ln.Addr().(*net.TCPAddr)
		c.ConnConfig.Host = a.IP.String()
		c.ConnConfig.Port = uint16(a.Port)
		c.ConnConfig.Fallbacks = nil
		c.ConnConfig.ConnectTimeout = 2 * time.Second
	})
	h := newHarnessOn(t, pool, adjust...)
	return h, proxy
}

func wantUnavailable(t *testing.T, what string, a answer) {
	t.Helper()
	if a.status != http.StatusServiceUnavailable || !strings.Contains(a.body, handlers.Unavailable) {
		t.Fatalf("%s: %d %q; want 503 saying %q", what, a.status, a.body, handlers.Unavailable)
	}
	if loc := a.header.Get("Location") + a.header.Get("HX-Redirect"); loc != "" {
		t.Fatalf("%s: sent the owner to %s while the database was away", what, loc)
	}
	for _, c := range a.header.Values("Set-Cookie") {
		t.Fatalf("%s: touched a cookie while the database was away: %s", what, c)
	}
}

func TestAStoppedDatabaseAnswers503AndKeepsTheOwnerSignedIn(t *testing.T) {
	t.Parallel()
	h, proxy := outageHarness(t)
	h.seed(dataset)
	owner := h.owner()
	before := h.snapshot()

	proxy.setDown(true)
	wantUnavailable(t, "GET /admin", h.get(owner, "/admin"))
	wantUnavailable(t, "GET /admin/series", h.get(owner, "/admin/series?filter=all"))
	// An htmx correction: the answer goes to the message slot, so the form
	// (and the number typed into it) stays on the page.
	a := h.post(owner, "/admin/series/asurascans/healthy/latest", url.Values{"latest": {"13"}},
		"HX-Request", "true", "HX-Target", "series-detail")
	wantUnavailable(t, "htmx correction", a)
	if a.header.Get("HX-Retarget") != "#page-message" {
		t.Fatalf("htmx correction: HX-Retarget %q; want the message slot", a.header.Get("HX-Retarget"))
	}
	a = h.post(owner, "/admin/lanes/asurascans/poll", nil, "HX-Request", "true")
	wantUnavailable(t, "htmx Forced Poll", a)
	if !strings.Contains(h.logs.String(), "database unavailable") {
		t.Errorf("no log line says the database was unavailable:\n%s", h.logs)
	}

	proxy.setDown(false)
	if a := h.get(owner, "/admin"); a.status != http.StatusOK {
		t.Fatalf("after the database came back: %d; the owner's session should have survived", a.status)
	}
	if h.snapshot() != before {
		t.Fatal("something changed while the database was away")
	}
}

func TestAFrozenDatabaseAnswers503WithinTheRequestDeadline(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(d *handlers.Deps) { d.RequestTimeout = 300 * time.Millisecond })
	h.seed(dataset)
	owner := h.owner()
	// The test's client gives up long before anyone would: a request that
	// waited for the lock instead of its deadline fails here.
	owner.Timeout = 10 * time.Second

	// Freeze every read a signed-in page makes: a lock the test holds.
	ctx := context.Background()
	tx, err := h.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE readers, series IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	wantUnavailable(t, "GET /admin", h.get(owner, "/admin"))
	wantUnavailable(t, "htmx finish", h.post(owner, "/admin/series/asurascans/healthy/finish",
		url.Values{"step": {"confirm"}, "confirm": {"yes"}}, "HX-Request", "true"))
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if a := h.get(owner, "/admin"); a.status != http.StatusOK {
		t.Fatalf("after the lock went: %d", a.status)
	}
	var finished int64
	if err := h.pool.QueryRow(ctx, `SELECT `+storetest.MilliOf("finished_at")+` FROM series WHERE series_id = 'healthy'`).Scan(&finished); err != nil || finished != 0 {
		t.Fatalf("finished_at %d %v; the refused control must change nothing", finished, err)
	}
}
