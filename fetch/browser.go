package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
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
// connects on its own, so the gate checks the host before the navigation (it
// must resolve to public addresses here), pauses every request the tab makes
// (each redirect hop of the document, every frame and subresource) to check
// its address and resolve its host the same way, and checks the final
// document address after; the sidecar's own DNS answer, and what a worker
// opens, are outside the gate's reach (docs/adr/0006).

// browserPoll is how often the page is looked at while waiting.
const browserPoll = 250 * time.Millisecond

// probeTimeout bounds the check that tells a dead sidecar from a failed page.
const probeTimeout = 2 * time.Second

type browserFetcher struct {
	dial        *gateDialer // resolves each document's host before the sidecar asks for it
	wsURL       string
	sidecarAddr string // host:port of wsURL, for the liveness probe
	// secrets are what an error must never quote: the whole of wsURL, and
	// its user-info and query (where a hosted browser keeps its token),
	// which reappear in the devtools address chromedp derives from it.
	secrets        []string
	timeout        time.Duration
	connectTimeout time.Duration
	challengeWait  time.Duration
	maxBody        int64
}

func newBrowserFetcher(dial *gateDialer, o ReaderOptions) *browserFetcher {
	b := &browserFetcher{
		dial:           dial,
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
	b.secrets = []string{o.BrowserWSURL}
	if u, err := url.Parse(o.BrowserWSURL); err == nil {
		if u.User != nil {
			b.secrets = append(b.secrets, u.User.String())
		}
		if u.RawQuery != "" {
			b.secrets = append(b.secrets, u.RawQuery)
		}
	}
	return b
}

// pageScript returns what the Poll reads from the tab, in one evaluation so the
// two agree: the rendered HTML, or for an API target the raw body Chrome shows
// in its <pre> (the HTML when the body is not there, so a challenge page stays
// recognisable), and whether the adapter's ready selector (%[2]s, "" for none)
// matches that same document. Two reads would let a page filled in, or reloaded,
// between them be kept as ready without its rows. It cuts the text to one
// character past the body cap inside the browser, so a page that grew a huge
// DOM is never carried over the DevTools connection whole.
const pageScript = `(() => {
  const sel = %[2]s;
  const ready = sel === "" || !!document.querySelector(sel);
  const pre = document.querySelector('body > pre');
  const s = pre ? pre.textContent : document.documentElement.outerHTML;
  return {body: s.length > %[1]d ? s.slice(0, %[1]d) : s, ready: ready};
})()`

// pageRead is what pageScript returns.
type pageRead struct {
	Body  string `json:"body"`
	Ready bool   `json:"ready"`
}

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
	g, err := guardRequests(tab,
		func(u *url.URL) (*url.URL, error) { return b.checkDocument(tab, fr, u) },
		b.cachedSubresourceCheck(tab, fr))
	if err != nil {
		return fetchResult{}, b.failure(ctx, tab, "setting up the gate", err)
	}
	var res fetchResult
	if fr.Body != "" {
		res, err = b.postFromOrigin(ctx, tab, fr, g)
	} else {
		res, err = b.openPage(ctx, tab, fr, g)
	}
	if err != nil {
		return fetchResult{}, err
	}
	if int64(len(res.Body)) > b.maxBody {
		res.Body, res.Oversize = res.Body[:b.maxBody], true
	}
	return res, nil
}

// openPage navigates the tab to fr.URL, waits for the page (a challenge to
// clear, the ready selector) and answers what it shows, once the gate has
// passed every document request and the final address.
func (b *browserFetcher) openPage(ctx, tab context.Context, fr fetchRequest, g *docGuard) (fetchResult, error) {
	res, err := b.navigate(ctx, tab, fr, g)
	if err != nil {
		return fetchResult{}, err
	}
	if err := b.waitForPage(ctx, tab, fr, &res); err != nil {
		return fetchResult{}, err
	}
	if gateErr := g.refused(); gateErr != nil {
		return fetchResult{}, gateErr
	}
	if err := b.checkFinalAddress(ctx, tab, fr); err != nil {
		return fetchResult{}, err
	}
	return res, nil
}

// navigate opens the Series page within the fetch timeout and answers the
// document's status and headers; a navigation the gate refused answers the
// gate's error.
func (b *browserFetcher) navigate(ctx, tab context.Context, fr fetchRequest, g *docGuard) (fetchResult, error) {
	navCtx, cancelNav := context.WithTimeout(tab, b.timeout)
	resp, err := chromedp.Run(navCtx, chromedp.NavigateResponse(fr.URL))
	cancelNav()
	if gateErr := g.refused(); gateErr != nil {
		return fetchResult{}, gateErr
	}
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
	return res, nil
}

// waitForPage reads the page into res until, within the bound, a challenge
// has cleared and the adapter's ready selector matches. A challenge that
// solves itself reloads the tab; the status of the document then shown is
// the Site's answer.
func (b *browserFetcher) waitForPage(ctx, tab context.Context, fr fetchRequest, res *fetchResult) error {
	deadline := time.Now().Add(b.challengeWait)
	sel, _ := json.Marshal(fr.Ready)
	script := fmt.Sprintf(pageScript, b.maxBody+1, sel)
	sawMarkers := false
	for {
		page, err := chromedp.Run(tab, chromedp.Evaluate[pageRead](script))
		if err != nil {
			// A reload in progress destroys the page's context for a moment;
			// only a dead tab, or the end of the bound, ends the wait.
			if tab.Err() != nil || ctx.Err() != nil || time.Now().After(deadline) {
				return b.failure(ctx, tab, "reading the page", err)
			}
			if err := sleepCtx(ctx, browserPoll); err != nil {
				return b.failure(ctx, tab, "waiting for the page", err)
			}
			continue
		}
		res.Body = []byte(page.Body)
		challenge := b.challengeShown(tab, res, &sawMarkers)
		if !challenge && (res.Status < 200 || res.Status > 299 || page.Ready) {
			return nil
		}
		if int64(len(res.Body)) > b.maxBody || time.Now().After(deadline) {
			return nil // past the cap it is an error whatever the page does next
		}
		if err := sleepCtx(ctx, browserPoll); err != nil {
			return b.failure(ctx, tab, "waiting for the page", err)
		}
	}
}

// challengeShown says whether the page read into res is still a challenge.
// Once one has cleared (its markers seen before, or the first answer marked
// cf-mitigated), the status of the document now shown replaces the
// challenge's.
func (b *browserFetcher) challengeShown(tab context.Context, res *fetchResult, sawMarkers *bool) bool {
	if isChallengeBody(res.Body) {
		*sawMarkers = true
		return true
	}
	if !*sawMarkers && !cfMitigated(res.Header) {
		return false
	}
	status, err := chromedp.Run(tab, chromedp.Evaluate[int](statusScript))
	switch {
	case err == nil && status > 0 && (*sawMarkers || status != res.Status):
		res.Status = status
		res.Header.Del("cf-mitigated")
		*sawMarkers = false
	case cfMitigated(res.Header):
		// Still the interstitial, in a shape the markers do not know.
		return true
	}
	return false
}

// checkFinalAddress puts the document's address through the gate: the
// navigation may have redirected.
func (b *browserFetcher) checkFinalAddress(ctx, tab context.Context, fr fetchRequest) error {
	loc, err := chromedp.Run(tab, chromedp.Evaluate[string](`location.href`))
	if err != nil {
		return b.failure(ctx, tab, "reading the address", err)
	}
	lu, err := url.Parse(loc)
	if err != nil {
		return fmt.Errorf("%w: unreadable final address", ErrGate)
	}
	_, err = fr.checkRedirect(lu)
	return err
}

// failure turns an error of the browser into the Poll's error: unreachable when
// the sidecar no longer answers, else a short description without the sidecar's
// address (which may carry a token).
func (b *browserFetcher) failure(ctx, tab context.Context, step string, err error) error {
	// The connection to the sidecar dropped (chromedp closes LostConnection and
	// ends the tab's context), or the sidecar no longer accepts connections.
	if connectionLost(tab) || (tab.Err() != nil && ctx.Err() == nil) || !b.alive() {
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
	msg := err.Error()
	for _, secret := range b.secrets {
		if secret != "" {
			msg = strings.ReplaceAll(msg, secret, "<sidecar>")
		}
	}
	if len(msg) > 160 {
		msg = msg[:160]
	}
	return fmt.Errorf("browser %s failed: %s", step, msg)
}

// connectionLost reports whether chromedp saw the tab's browser connection drop.
func connectionLost(tab context.Context) bool {
	c := chromedp.FromContext(tab)
	if c == nil || c.Browser == nil {
		return false
	}
	select {
	case <-c.Browser.LostConnection:
		return true
	default:
		return false
	}
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

// docGuard holds the first gate refusal of a tab's top-level document
// requests, and the first of a POST from its main frame (how postFromOrigin
// tells the gate's block from any other failed fetch).
type docGuard struct {
	mu   sync.Mutex
	err  error
	post error
}

func (g *docGuard) refuse(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		g.err = err
	}
}

func (g *docGuard) refused() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

func (g *docGuard) refusePost(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.post == nil {
		g.post = err
	}
}

func (g *docGuard) resetPost() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.post = nil
}

func (g *docGuard) postRefused() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.post
}

// checkDocument is the gate for one top-level document the sidecar is about to
// request, and where it is to be sent. The redirect rules alone admit any host
// under the Site's domain, and the sidecar dials whatever that name resolves
// to: so, as Read does for the first navigation, the host must resolve to
// public addresses here. Under SITE_BASE_URLS a redirect to the Site's own
// host is sent to the operator's host instead, as the plain route sends it;
// that host alone is dialled as given.
func (b *browserFetcher) checkDocument(ctx context.Context, fr fetchRequest, u *url.URL) (*url.URL, error) {
	to, err := fr.checkRedirect(u)
	if err != nil {
		return nil, err
	}
	if fr.Base != nil && to.Scheme == fr.Base.Scheme && hostPort(to) == hostPort(fr.Base) {
		return to, nil
	}
	return to, b.dial.checkHostPublic(ctx, to)
}

// challengeHosts are the hosts a Site's challenge provider loads its own
// scripts and frames from (Cloudflare's Turnstile); a browser Poll may reach
// them as well as the Site's own hosts.
var challengeHosts = []string{"challenges.cloudflare.com"}

// checkSubresource is the gate for every other request a Poll's tab makes
// (frames, images, scripts, fetch/XHR, a frame's own navigations): the
// Site's own https hosts or its challenge provider's, resolving to public
// addresses here, or under SITE_BASE_URLS the operator's host as given.
// Anything else — another host, a literal private, loopback or link-local
// address — never leaves the sidecar (docs/adr/0006).
func (b *browserFetcher) checkSubresource(ctx context.Context, fr fetchRequest, u *url.URL) error {
	if fr.Base != nil && u.Scheme == fr.Base.Scheme && hostPort(u) == hostPort(fr.Base) && u.User == nil {
		return nil
	}
	if err := checkAddress(u, fr.Adapter.Site(), fr.Adapter.Domains(), challengeHosts); err != nil {
		return err
	}
	return b.dial.checkHostPublic(ctx, u)
}

// cachedSubresourceCheck is checkSubresource with one answer per scheme and
// host:port for the Poll, so a page of a hundred images resolves its image
// host once. The paused requests are handled one at a time, so the map needs
// no lock.
func (b *browserFetcher) cachedSubresourceCheck(tab context.Context, fr fetchRequest) func(*url.URL) error {
	seen := map[string]error{}
	return func(u *url.URL) error {
		if u.User != nil {
			return fmt.Errorf("%w: the address carries user-info", ErrGate)
		}
		key := u.Scheme + "://" + hostPort(u)
		if err, ok := seen[key]; ok {
			return err
		}
		err := b.checkSubresource(tab, fr, u)
		seen[key] = err
		return err
	}
}

// wsBlock runs in every frame of a Poll's tab before the page's own
// scripts: the Fetch domain does not pause WebSocket handshakes, so the
// constructor is taken away instead (a page reading chapter lists needs no
// socket). Workers are outside its reach; see docs/adr/0006.
const wsBlock = `(() => {
  const refuse = function () { throw new DOMException('WebSocket refused by mangabookmark', 'SecurityError'); };
  Object.defineProperty(window, 'WebSocket', { value: refuse, writable: false, configurable: false });
})()`

// guardRequests pauses every request the tab makes and lets it continue
// only if the gate passes it: the top-level document (the navigation, each
// redirect hop, a challenge's reload) through checkDoc, which may rewrite it
// onto SITE_BASE_URLS, and every frame and subresource through checkSub. A
// refused document fails the Poll (refused reports it); a refused
// subresource is only blocked, and the page goes on without it; a refused
// POST of the main frame is also kept (postRefused).
func guardRequests(tab context.Context, checkDoc func(*url.URL) (*url.URL, error), checkSub func(*url.URL) error) (*docGuard, error) {
	g := &docGuard{}
	c := chromedp.FromContext(tab)
	if c == nil || c.Target == nil {
		return nil, chromedp.ErrInvalidContext
	}
	mainFrame := string(c.Target.TargetID)
	paused := chromedp.Events(tab, cdpfetch.RequestPaused)
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: wsBlock}); err != nil {
		return nil, err
	}
	if _, err := chromedp.Call(tab, cdpfetch.Enable, cdpfetch.EnableParams{Patterns: []*cdpfetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		return nil, err
	}
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			if ev.Request == nil {
				chromedp.Call(tab, cdpfetch.ContinueRequest, cdpfetch.ContinueRequestParams{RequestID: ev.RequestID})
				continue
			}
			top := string(ev.FrameID) == mainFrame && ev.ResourceType == network.ResourceTypeDocument
			to, err := pausedVerdict(ev.Request.URL, top, checkDoc, checkSub)
			if err != nil {
				switch {
				case top:
					g.refuse(err)
				case string(ev.FrameID) == mainFrame && ev.Request.Method != http.MethodGet:
					// A POST, or the preflight its cross-origin redirect makes.
					g.refusePost(err)
				}
				chromedp.Call(tab, cdpfetch.FailRequest, cdpfetch.FailRequestParams{
					RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient,
				})
				continue
			}
			next := cdpfetch.ContinueRequestParams{RequestID: ev.RequestID}
			if to != "" { // rewritten onto SITE_BASE_URLS
				next.URL = to
			}
			chromedp.Call(tab, cdpfetch.ContinueRequest, next)
		}
	}()
	return g, nil
}

// pausedVerdict is the gate's answer for one paused request: an error to
// block it, else the address to send it to instead ("" for unchanged).
func pausedVerdict(raw string, top bool, checkDoc func(*url.URL) (*url.URL, error), checkSub func(*url.URL) error) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: unreadable address", ErrGate)
	}
	if !top {
		return "", checkSub(u)
	}
	to, err := checkDoc(u)
	if err != nil {
		return "", err
	}
	if to != u {
		return to.String(), nil
	}
	return "", nil
}
