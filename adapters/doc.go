// Package adapters is the read path of the Poll: it recognises a Series address,
// passes it through the fetch gate, fetches it over the Site's route (plain HTTPS
// or the headless browser sidecar), classifies the answer into one of the seven
// outcome words, and parses the Site's page into Facts.
//
// # Adapters
//
// One file per Site (asurascans.go, demonicscans.go, comix.go, kagane.go,
// novelfull.go, lightnovelworld.go) holds that Site's Adapter; its selectors and
// JSON keys are named values at the top of the file. Recognise maps a Series
// page, a chapter page of it, or a legacy address shape to the Site, a stable
// series_id and the canonical address. Parse takes bytes and never fetches; it
// reads the title, cover, Latest Chapter (the highest number on the Series' own
// list, canonical decimal) and the Site's own completed value (CONTEXT.md, Rules: Completion hint value:
// a missing marker is not completed, never an error). It returns ErrNotSeries
// only when the body is not the Site's Series page at all.
//
// # Where an adapter may look
//
// Real Sites move their blocks about: a chapter list ends up outside the
// details container, wrapped in another element, after the footer, or before
// the details. An adapter that insists on one layout reads no chapter from a
// page that plainly lists them, and a whole Site turns into no_chapter and a
// false adapter-broken notice. So the rule has two halves.
//
// Scope like the public parsers that have tracked these Sites for years. An
// adapter may anchor only on what they rely on: an element's own id or class
// (div#chapters-list a.chplinks, script#initial-data, ul.l-chapters), a JSON
// key or what an island's props carry, a label's text (the "Status" row).
// It never requires an exact parent, a depth or a sibling order the references
// do not require; where it prefers a container (Demonic Scans' details under
// div#manga-info-container), it falls back to the whole document.
//
// Guard like us, so that widening is safe:
//
//   - Only this Series' own chapters count, checked by address: the link's
//     whole path must be a chapter address of the Series (its slug, title
//     segment, hid or id), or the JSON row must name the Series. A "related",
//     "popular" or "latest updates" block, which uses the same markup for other
//     Series, never counts, wherever it sits.
//   - A link to another host never counts: every chapter passes through
//     latest.offer, which drops an address whose host is not the Site's. Links
//     are resolved against the page's address before any check, so a host is
//     never lost on the way.
//   - Details that name another Series (a JSON-LD Book with another url, a
//     react-query detail entry with another hid, an island with another slug)
//     are never this Series' details.
//
// The variant fixtures (testdata/variants/<site>/) move every block an adapter
// reads and add another Series' blocks; each must read the facts its Site's
// completed page reads.
//
// # Text as a person reads it
//
// A title is decoded by its source (the HTML parser for text and attributes,
// once by hand for JSON in a script or an API body); a well-formed character
// reference still left after that is decoded once more, because Sites serve
// some titles escaped twice (Reader&amp;#39;s). A bare "&" is literal text and
// stays. A Series without a parsed title is shown by DisplayName, a name made
// from its address.
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
//	errors        5xx, a plain 403, an oversize body, a timeout, a transport error
//	refused       403 with cf-mitigated: challenge, a challenge interstitial body
//	              with any status, a challenge that did not clear in the browser,
//	              or 429 (the Site setting its pace)
//	unreachable   the browser sidecar is not configured, cannot be dialled, or
//	              its connection dropped mid-Poll
//
// The classification table is classification in classify.go; its own test serves
// each rule's example from an httptest server.
//
// # The fetch gate
//
// An address is fetched only if it is https, carries no user-info, and its host
// belongs to the Site (Adapter.Domains, exact host or subdomain). The plain
// route's dialer resolves the host itself and refuses loopback, private,
// link-local, multicast, unspecified, shared and reserved addresses, then
// connects to the address it checked. Every redirect is checked again, at most
// five are followed. The browser route checks the host before navigating, pauses
// every top-level document request in its tab (each redirect hop) to check it
// and resolve its host the same way, and checks the final address; Chrome
// resolves names itself, so the sidecar's own DNS answer is outside the gate.
// Frames and subresources are not paused (a challenge's frames must load): the
// sidecar belongs on a network where nothing private is reachable.
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
// See ParseBaseURLs, ParseBrowserSites and ReaderOptions for the details and the
// timeouts, body cap and challenge wait.
package adapters
