package server

import (
	"context"
	"net"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// hangingWebhook accepts connections, reads what is sent and never answers.
func hangingWebhook(t *testing.T) (addr string, accepted *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int32{}
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			accepted.Add(1)
			go func() { _, _ = c.Read(make([]byte, 1<<16)) }()
		}
	}()
	return l.Addr().String(), accepted
}

var loginLinkRe = regexp.MustCompile(`https?://\S+/login/\S+`)

// signInWithLink follows the console sign-in link and returns a client that
// carries the owner's session.
func signInWithLink(t *testing.T, stdout *syncBuffer) *http.Client {
	t.Helper()
	var link string
	for deadline := time.Now().Add(10 * time.Second); link == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		link = loginLinkRe.FindString(stdout.String())
	}
	if link == "" {
		t.Fatalf("no sign-in link printed:\n%s", stdout)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(link, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in answered %d", resp.StatusCode)
	}
	return c
}

// seedAdapterBroken makes adapter-broken hold on each Site: one Series,
// not due, failing with no chapter for thirteen hours.
func seedAdapterBroken(t *testing.T, url string, sites []string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, url, store.Pools{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	for _, site := range sites {
		if err := st.CreateSeries(ctx, store.Series{Site: site, SeriesID: "s1", URL: "https://" + site + ".example/s1", Kind: "manga"}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Pool().Exec(ctx, `UPDATE series SET checked_at = $1, next_read_at = $1::timestamptz + interval '1 hour' WHERE site = $2`, storetest.Milli(now.UnixMilli()), site); err != nil {
			t.Fatal(err)
		}
		storetest.Insert(t, st.Pool(), storetest.Failure{Site: word.Site(site), Series: "s1", Outcome: word.NoChapter, FailingSince: now.Add(-13 * time.Hour)})
	}
}

// A webhook that never answers, with five notices open and unsent, costs the
// pages nothing: /healthz stays 200 and /admin answers in its usual time
// while every Lane's POST hangs (docs/adr/0005, store.Pools).
func TestAHungWebhookNeverStarvesThePages(t *testing.T) {
	t.Parallel()
	hook, accepted := hangingWebhook(t)
	dbURL := storetest.URL(t)
	sites := []string{"asurascans", "demonicscans", "novelfull", "lightnovelworld", "kagane"}
	seedAdapterBroken(t, dbURL, sites)
	addr := freeAddr(t)
	env := map[string]string{
		"DATABASE_URL":            dbURL,
		"DATA_DIR":                t.TempDir(),
		"LISTEN_ADDR":             addr,
		"DISCORD_WEBHOOK_URL":     "http://" + hook + "/api/webhooks/1/x",
		"DATABASE_POOL_SIZE":      "2",
		"DATABASE_LANE_POOL_SIZE": "2",
		"POLL_SPACING":            "0s",
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, func(k string) string { return env[k] }, &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	base := "http://" + addr
	waitHealthy(t, base, done)
	owner := signInWithLink(t, &stdout)
	// Four hanging POSTs at once: as many as pgx's default pool holds on a
	// two-core machine, which a send holding its connection would take whole.
	const hanging = 4
	for deadline := time.Now().Add(20 * time.Second); accepted.Load() < hanging; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d notices reached the webhook:\n%s", accepted.Load(), stderr.String())
		}
	}
	// Those Lanes are now inside their POSTs, which last the client's 10 s.
	const bound = 3 * time.Second // generous: each answers in milliseconds
	timed := &http.Client{Jar: owner.Jar, Timeout: bound, CheckRedirect: owner.CheckRedirect}
	for _, p := range []string{"/healthz", "/admin", "/admin/lanes", "/healthz", "/admin/series"} {
		start := time.Now()
		resp, err := timed.Get(base + p)
		if err != nil {
			t.Fatalf("GET %s while the webhook hangs: %v", p, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s while the webhook hangs: %d after %s", p, resp.StatusCode, time.Since(start))
		}
	}
}
