package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// A Target with a Body (Kagane's listing search) is a POST, and a browser
// only navigates with GET. So the browser route sends it the way the Site's
// own page does: the tab opens the Site's home page (the target's origin,
// "/"), and a script in that page fetches the target with the body as
// application/json. Same origin, so no CORS preflight, and the tab's
// cookies (a cleared challenge's among them) go with it. The request is
// paused and checked like every other request of the tab (guardRequests:
// the Site's own hosts, public addresses, SITE_BASE_URLS as given), its
// final address goes through the redirect rules, and its body is cut at the
// cap inside the browser (docs/adr/0006).

// postScript fetches %[2]s with the JSON body %[3]s from the page and
// answers the status, the final address, the headers and the body text,
// read chunk by chunk and cut to the cap (%[1]d bytes): a longer body is
// never carried over the DevTools connection whole.
const postScript = `(async () => {
  const cap = %[1]d;
  const r = await fetch(%[2]s, {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: %[3]s, credentials: 'same-origin', cache: 'no-store'});
  const chunks = [];
  let n = 0;
  if (r.body) {
    const rd = r.body.getReader();
    for (;;) {
      const {done, value} = await rd.read();
      if (done) break;
      chunks.push(value);
      n += value.length;
      if (n > cap) { rd.cancel(); break; }
    }
  }
  const all = new Uint8Array(n);
  let at = 0;
  for (const c of chunks) { all.set(c, at); at += c.length; }
  const over = n > cap;
  return {status: r.status, url: r.url, headers: [...r.headers],
    body: new TextDecoder().decode(over ? all.subarray(0, cap) : all), over: over};
})()`

// postRead is what postScript returns.
type postRead struct {
	Status  int         `json:"status"`
	URL     string      `json:"url"`
	Headers [][2]string `json:"headers"`
	Body    string      `json:"body"`
	Over    bool        `json:"over"`
}

// ErrBrowserPOST is the error of a POST target (Kagane's listing search) the
// browser route will not send: the Site's home page ended on another origin,
// from which the POST would be cross-origin, not what the Site's own page
// sends. The read is the outcome errors, and the POST is not sent.
var ErrBrowserPOST = errors.New("the browser route sends a POST only from the Site's own page, and its home page moved to another origin")

// postFromOrigin opens the target's home page and, once it shows the Site's
// page, POSTs the target from it. A home page the Site refused or failed (a
// challenge that did not clear, a 429, a 5xx) is the Site's answer, and is
// classified as any other; the POST is not sent.
func (b *browserFetcher) postFromOrigin(ctx, tab context.Context, fr fetchRequest, g *docGuard) (fetchResult, error) {
	target, err := url.Parse(fr.URL)
	if err != nil {
		return fetchResult{}, fmt.Errorf("%w: bad target address", ErrGate)
	}
	home := fr
	home.URL, home.Ready = (&url.URL{Scheme: target.Scheme, Host: target.Host, Path: "/"}).String(), ""
	res, err := b.openPage(ctx, tab, home, g)
	if err != nil {
		return fetchResult{}, err
	}
	if res.Status < 200 || res.Status > 299 || isChallengeBody(res.Body) || cfMitigated(res.Header) {
		return res, nil
	}
	origin, err := chromedp.Run(tab, chromedp.Evaluate[string](`location.origin`))
	if err != nil {
		return fetchResult{}, b.failure(ctx, tab, "reading the address", err)
	}
	if ou, err := url.Parse(origin); err != nil || ou.Scheme != target.Scheme || hostPort(ou) != hostPort(target) {
		return fetchResult{}, ErrBrowserPOST
	}
	return b.post(ctx, tab, fr, g)
}

// post runs postScript in a world of its own in the tab's main frame (the
// page's scripts cannot wrap its fetch), within the fetch timeout.
func (b *browserFetcher) post(ctx, tab context.Context, fr fetchRequest, g *docGuard) (fetchResult, error) {
	c := chromedp.FromContext(tab)
	if c == nil || c.Target == nil {
		return fetchResult{}, b.failure(ctx, tab, "POST", chromedp.ErrInvalidContext)
	}
	world, err := chromedp.Call(tab, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{
		FrameID: cdp.FrameID(c.Target.TargetID), WorldName: "mangabookmark",
	})
	if err != nil {
		return fetchResult{}, b.failure(ctx, tab, "POST", err)
	}
	u, _ := json.Marshal(fr.URL)
	body, _ := json.Marshal(fr.Body)
	script := fmt.Sprintf(postScript, b.maxBody, u, body)
	postCtx, cancel := context.WithTimeout(tab, b.timeout)
	defer cancel()
	g.resetPost() // a POST the home page's own scripts had blocked is not ours
	got, err := chromedp.Run(postCtx, chromedp.Evaluate[postRead](script, chromedp.EvalAwaitPromise,
		func(p *runtime.EvaluateParams) { p.ContextID = world.ExecutionContextID }))
	if err != nil {
		if gateErr := g.postRefused(); gateErr != nil {
			return fetchResult{}, gateErr
		}
		return fetchResult{}, b.failure(ctx, tab, "POST", err)
	}
	final, err := url.Parse(got.URL)
	if err != nil {
		return fetchResult{}, fmt.Errorf("%w: unreadable final address", ErrGate)
	}
	if _, err := fr.checkRedirect(final); err != nil {
		return fetchResult{}, err
	}
	res := fetchResult{Status: got.Status, Header: http.Header{}, Body: []byte(got.Body), Oversize: got.Over}
	for _, h := range got.Headers {
		res.Header.Add(h[0], h[1])
	}
	return res, nil
}
