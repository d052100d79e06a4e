package adapters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// The browser route reads a page through the headless Chrome sidecar at
// BROWSER_WS_URL, over a chromedp remote allocator: one connection and one tab
// per Poll, closed when the Poll ends. It waits, within a bound, for a challenge
// to clear (a Cloudflare interstitial solves itself and reloads) and for the
// adapter's ready selector; a challenge still standing at the bound is refused.
//
// A sidecar that cannot be dialled, or whose connection drops mid-Poll, is
// ErrUnreachable, so the Poll can mark the browser down. The sidecar resolves and
// connects on its own, so the gate checks the address before the navigation (the
// host must resolve to public addresses here) and the final document address
// after it; the sidecar's own DNS answer is outside the gate's reach.

// browserPoll is how often the page is looked at while waiting.
const browserPoll = 250 * time.Millisecond

// probeTimeout bounds the check that tells a dead sidecar from a failed page.
const probeTimeout = 2 * time.Second

type browserFetcher struct {
	wsURL          string
	sidecarAddr    string // host:port of wsURL, for the liveness probe
	timeout        time.Duration
	connectTimeout time.Duration
	challengeWait  time.Duration
	maxBody        int64
}

func newBrowserFetcher(o ReaderOptions) *browserFetcher {
	b := &browserFetcher{
		wsURL:          o.BrowserWSURL,
		timeout:        o.Timeout,
		connectTimeout: o.ConnectTimeout,
		challengeWait:  o.ChallengeWait,
		maxBody:        o.MaxBody,
	}
	if u, err := url.Parse(o.BrowserWSURL); err == nil && u.Host != "" {
		port := u.Port()
		if port == "" {
			port = "80"
			if u.Scheme == "wss" || u.Scheme == "https" {
				port = "443"
			}
		}
		b.sidecarAddr = net.JoinHostPort(u.Hostname(), port)
	}
	return b
}

// pageScript returns what the Poll reads from the tab: the rendered HTML, or for
// an API target the raw body Chrome shows in its <pre> (the HTML when the body is
// not there, so a challenge page stays recognisable).
const pageScript = `(() => {
  const pre = document.querySelector('body > pre');
  return pre ? pre.textContent : document.documentElement.outerHTML;
})()`

// statusScript is the HTTP status of the document now in the tab (after a
// challenge reloaded it); 0 when the browser does not say.
const statusScript = `(() => {
  const n = performance.getEntriesByType('navigation')[0];
  return n && n.responseStatus ? n.responseStatus : 0;
})()`

func (b *browserFetcher) fetch(ctx context.Context, fr fetchRequest) (fetchResult, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout+b.challengeWait)
	defer cancel()
	allocCtx, cancelAlloc := remote.NewAllocator(ctx, b.wsURL, remote.WithDialTimeout(b.connectTimeout))
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()

	// Connect and open the tab, with no tighter deadline than the Poll's.
	if err := chromedp.Do(tab); err != nil {
		return fetchResult{}, fmt.Errorf("%w: could not connect to the sidecar", ErrUnreachable)
	}

	navCtx, cancelNav := context.WithTimeout(tab, b.timeout)
	resp, err := chromedp.Run(navCtx, chromedp.NavigateResponse(fr.URL))
	cancelNav()
	if err != nil {
		return fetchResult{}, b.failure(ctx, tab, "navigation", err)
	}
	res := fetchResult{Header: http.Header{}}
	if resp != nil {
		res.Status = int(resp.Status)
		for k, v := range resp.Headers {
			res.Header.Set(k, fmt.Sprint(v))
		}
	}

	deadline := time.Now().Add(b.challengeWait)
	for {
		body, err := chromedp.Run(tab, chromedp.Evaluate[string](pageScript))
		if err != nil {
			return fetchResult{}, b.failure(ctx, tab, "reading the page", err)
		}
		res.Body = []byte(body)
		if !isChallengeBody(res.Body) && b.ready(tab, fr.Ready) {
			break
		}
		if time.Now().After(deadline) {
			break
		}
		if err := sleepCtx(ctx, browserPoll); err != nil {
			return fetchResult{}, b.failure(ctx, tab, "waiting for the page", err)
		}
	}

	if cfMitigated(res.Header) && !isChallengeBody(res.Body) {
		// A challenge that solved itself reloads the tab: when the document now
		// shown answered with another status, it is the Site's page.
		status, err := chromedp.Run(tab, chromedp.Evaluate[int](statusScript))
		if err == nil && status > 0 && status != res.Status {
			res.Header.Del("cf-mitigated")
			res.Status = status
		}
	}

	// The navigation may have redirected: the document's address passes the gate too.
	loc, err := chromedp.Run(tab, chromedp.Evaluate[string](`location.href`))
	if err != nil {
		return fetchResult{}, b.failure(ctx, tab, "reading the address", err)
	}
	if lu, err := url.Parse(loc); err != nil {
		return fetchResult{}, fmt.Errorf("%w: unreadable final address", ErrGate)
	} else if _, err := fr.checkRedirect(lu); err != nil {
		return fetchResult{}, err
	}

	if int64(len(res.Body)) > b.maxBody {
		res.Body, res.Oversize = res.Body[:b.maxBody], true
	}
	return res, nil
}

// ready reports whether the page holds sel ("" is always ready).
func (b *browserFetcher) ready(tab context.Context, sel string) bool {
	if sel == "" {
		return true
	}
	q, _ := json.Marshal(sel)
	ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](`!!document.querySelector(`+string(q)+`)`))
	return err == nil && ok
}

// failure turns an error of the browser into the Poll's error: unreachable when
// the sidecar no longer answers, else a short description without the sidecar's
// address (which may carry a token).
func (b *browserFetcher) failure(ctx, tab context.Context, step string, err error) error {
	// chromedp ends the tab's context when the connection to the browser
	// ends; the Poll's own context still running means the sidecar went away.
	if (tab.Err() != nil && ctx.Err() == nil) || !b.alive() {
		return fmt.Errorf("%w: lost the connection during %s", ErrUnreachable, step)
	}
	var le *chromedp.LoadError
	switch {
	case errors.As(err, &le):
		return fmt.Errorf("browser %s failed: %s", step, le.ErrorText)
	case errors.Is(err, chromedp.ErrChannelClosed), errors.Is(err, chromedp.ErrTargetDetached):
		return fmt.Errorf("%w: the tab was closed during %s", ErrUnreachable, step)
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return fmt.Errorf("browser %s timed out", step)
	}
	msg := strings.ReplaceAll(err.Error(), b.wsURL, "<sidecar>")
	if len(msg) > 160 {
		msg = msg[:160]
	}
	return fmt.Errorf("browser %s failed: %s", step, msg)
}

// alive reports whether the sidecar still accepts connections.
func (b *browserFetcher) alive() bool {
	if b.sidecarAddr == "" {
		return false
	}
	c, err := net.DialTimeout("tcp", b.sidecarAddr, probeTimeout)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
