// Package fetch is the I/O half of the read path: address in, bytes out. It
// takes a Series address through the fetch gate, fetches it over the Site's
// route (plain HTTPS or the headless browser sidecar), classifies the answer
// into one of the seven outcome words and hands a page to the Site's adapter
// (package adapters, which never fetches). It also fetches covers through the
// same gate. It is the one package of the server that imports the browser
// driver (chromedp); the poller and the handlers consume its Reader through
// the small interfaces they declare, and name its values (adapters.Result,
// adapters.CoverImage) without importing it.
//
// # Reading
//
// Reader.Read runs recognise → gate → fetch (route) → classify → parse and
// returns a Result: the outcome word, the facts, whether the Site's own answer
// arrived (Checked), the status, a 429's bounded Retry-After, and a short error
// safe to log.
//
//	outcome       when
//	ok            2xx, the adapter found a chapter
//	no_chapter    2xx, a real page but no chapter (or not the Series page at all)
//	unfetchable   the address fails the gate; no request left the machine
//	not_found     4xx other than 403 and 429
//	errors        5xx, a plain 403, an oversize body, a timeout or a dropped
//	              connection after the Site accepted ours
//	refused       403 with cf-mitigated: challenge, a challenge interstitial body
//	              with any status, a challenge that did not clear in the browser,
//	              or 429 (the Site setting its pace)
//	unreachable   the browser route: the sidecar is not configured, cannot be
//	              dialled, or its connection dropped mid-Poll; the plain route:
//	              no answer came because the Site's name did not resolve, the
//	              connection was refused or could not be made, or TLS failed
//	              (networkFault, docs/adr/0022)
//
// The classification table is classification in classify.go; its own test serves
// each rule's example from an httptest server. A 2xx goes to the Site's
// adapter (adapters.Adapter.Parse), which reads the bytes and never fetches.
//
// # A POST
//
// A Target with a Body (Kagane's listing search) is POSTed as
// application/json. The plain route sends it as any request. The browser
// route, which navigates only with GET, opens the Site's home page (the
// target's origin, "/") and has the page fetch the target with the body, the
// same-origin request the Site's own page makes (browser_post.go). The
// request and its redirects pass the gate like every request of the tab, the
// body is cut at the cap in the browser, and the status, headers and body go
// to the same classification, so each outcome means what it means on the
// plain route. A home page the Site refuses or fails is its answer, and the
// POST is not sent; one that ends on another origin is ErrBrowserPOST
// (errors, nothing POSTed).
//
// # The fetch gate
//
// An address is fetched only if it is https, carries no user-info, names no
// port but 443, and its host belongs to the Site (Adapter.Domains, exact host
// or subdomain). These rules are written once, in checkAddress (gate.go): a
// Site's pages, its covers (widened by adapters.CoverHosts) and a browser
// Poll's frames and subresources (widened by the challenge provider's hosts)
// all pass it. The plain route's dialer resolves the host itself and refuses
// loopback, private, link-local, multicast, unspecified, shared and reserved
// addresses, then connects to the address it checked. Every redirect is
// checked again, at most five are followed. The browser route checks the host
// before navigating, pauses every request its tab makes (each redirect hop of
// the document, every frame and subresource) to check it and resolve its host
// the same way, and checks the final address; Chrome resolves names itself,
// so the sidecar's own DNS answer is outside the gate, and WebSocket
// handshakes, which are not paused, are refused by taking the constructor
// away (docs/adr/0006). The sidecar still belongs on a network where nothing
// private is reachable.
//
// # Configuration
//
// The server (and the `mangabookmark fetch` tool) builds ReaderOptions from:
//
//	SITE_BASE_URLS  "asurascans=http://127.0.0.1:9001,kagane=https://mirror.lan:8443"
//	                Rewrites the scheme and host of that Site's addresses when
//	                fetching; stored addresses keep the real host. The only way a
//	                loopback or private address passes the gate: the named
//	                host:port is dialled as given, and redirects to the Site's real
//	                hosts are put back onto it. Logged once at start. Used by the
//	                tests, the demo's stand-in Sites and private mirrors.
//	BROWSER_SITES   Sites read through the browser sidecar; default "comix,kagane";
//	                "none" for no Site.
//	BROWSER_WS_URL  The sidecar's DevTools address (ws://host:9222 or the full
//	                ws://host:9222/devtools/browser/<id>). Unset: browser Sites read
//	                as unreachable. Never quoted in an error.
//
// See ParseBaseURLs, word.ParseBrowserSites and ReaderOptions for the details
// and the timeouts, body cap and challenge wait.
package fetch
