package handlers

import (
	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// filterWord is everything the owner reads about one filter: its short
// label (a chip, a figure), its one meaning sentence (shown on the list page
// and as the figure's accessible description, the same sentence from here),
// and whether a non-zero figure is a fault the owner should act on. The
// longer form of each meaning is CONTEXT.md's glossary.
type filterWord struct {
	label, meaning string
	fault          bool
}

var filterWords = map[store.Filter]filterWord{
	store.FilterAll: {"every Series", "Every Series the server knows, Finished or not.", false},
	store.FilterNeverChecked: {"never read", "Not Finished, and no Poll has reached its page yet: it is due at its Lane's next pass " +
		"(a Lane that cannot reach its Site says so on the Lanes page).", false},
	store.FilterStale: {"stale", "Not Finished, and it was last checked (a Poll attempted, whether it reached the page or not) " +
		"more than 12 hours ago.", false},
	store.FilterUnpollable: {"unpollable", "Not Finished and cannot be Polled at all: it has no address, or the fetch gate " +
		"refused its address (unfetchable). Correct the address or delete the Series.", true},
	store.FilterNoChapter: {"no chapter", "Its page was reached, it is not Finished, and no chapter number was ever read from it: " +
		"the address may be wrong or the adapter may not read this page.", true},
	store.FilterFailing: {"failing", "It yielded a chapter once, and every Poll for over 12 hours has failed " +
		"(the failure row is older than 12 hours).", true},
	store.FilterUnverified: {"unverified", "Its Latest Chapter was raised by a Reader's Sighting, and no Poll has " +
		"confirmed it: its Polls have failed for over 12 hours, or it was raised over 12 hours ago and no read " +
		"of the Site's page has shown that number since.", true},
	store.FilterSiteCompleted: {"site-completed", "Not Finished, but its Site marks the work completed: a hint " +
		"that you may want to Finish it (the Site never Finishes anything itself).", false},
	store.FilterFinished: {"finished", "You marked it Finished: the work is over for the group and it is no longer polled.", false},
	store.FilterOrphan: {"orphan", "No Reader bookmarks it: it is read only at the backstop (POLL_BACKSTOP). Delete removes it at once; " +
		"a bookmarked Series is deleted too, after a confirm naming its Readers, whose Bookmarks go with it.", false},
	store.FilterYieldsNoChapter: {"yields no chapter", "Not Finished, and every Poll for over 12 hours has reached its page " +
		"and read no chapter number from it (no_chapter). When more than half of a Site's Series are here, its adapter " +
		"no longer reads the Site's pages.", true},
}

// captionWord is the filter as a list's caption names it: the failing list
// says how long "failing" is, so a row's fresh failure marker never seems to
// contradict an empty list.
func captionWord(f store.Filter) string {
	switch f {
	case store.FilterFailing:
		return "failing for over 12 hours"
	case store.FilterYieldsNoChapter:
		return "yielding no chapter for over 12 hours"
	}
	return filterWords[f].label
}

// redirectRefusedMeaning is Test read's meaning of an unfetchable read
// whose refused address was a redirect (adapters.RedirectRefusedError): the
// first request was made, so "before any request" would be false.
const redirectRefusedMeaning = "The Site answered the first request with a redirect, and the fetch gate refused " +
	"the address it redirected to: it is not https, not on the Site's own hosts, or not a public address. " +
	"The first request was made; the redirect was not followed."

// outcomeWord is what an Outcome means for this Series and what the owner
// can do about it; its plain words are word.Outcome.PlainOn, shown once.
type outcomeWord struct {
	meaning, action string
}

var outcomeWords = map[word.Outcome]outcomeWord{
	word.OK: {"The last Poll read the page and its chapter list.", "Nothing to do."},
	word.NoChapter: {
		"The Site answered with a page, but no chapter number could be read from it: the address may point at " +
			"something other than the Series page, or the Site changed its markup.",
		"Open the address and check it is the Series page; correct it if not. If every Series of the Site fails " +
			"like this, the adapter needs fixing."},
	word.Unfetchable: {
		"The fetch gate refused an address: the stored one, before any request was made, or one the Site " +
			"redirected to, after the first request: it is not https, not on the Site's own hosts, or not a public address.",
		"Correct the address to the Series page on the Site, or delete the Series."},
	word.NotFound: {
		"The Site answered that the page does not exist (404 or 410): the Series was moved or removed.",
		"Find the Series on the Site again and correct the address above, or delete the Series."},
	word.Errors: {
		"The Site answered with an error (5xx, a plain 403, an oversized page), or took our connection and then " +
			"dropped it or never answered.",
		"Usually this passes by itself: wait for the Site. If it persists, try Test read to see the error."},
	word.Refused: {
		"The Site held a challenge or a rate limit instead of the page. This says nothing about the Series.",
		"Wait for the Site. If it keeps refusing, give the Site a browser route (BROWSER_SITES)."},
	word.Unreachable: {
		"The browser sidecar could not be reached, so the page was never read.",
		"Start the browser sidecar or fix BROWSER_WS_URL."},
}

// outcomeWordOn is o's words for a Site read over the route browser says:
// on the plain route, unreachable is our network failing to reach the
// Site's host, not the sidecar (docs/adr/0022).
func outcomeWordOn(o word.Outcome, site string, browser bool) (outcomeWord, bool) {
	if o == word.Unreachable && !browser {
		return networkWord(site), true
	}
	w, ok := outcomeWords[o]
	return w, ok
}

// networkWord is the plain route's unreachable: the name did not resolve,
// the connection was refused or TLS failed. That is most often this
// machine's network, so the action names the check; and the Site's own host
// going away looks the same from here, so it names that too. The host is the
// Site's own, never a stored address (which could carry anything).
func networkWord(site string) outcomeWord {
	host := siteHost(site)
	return outcomeWord{
		"The server could not reach " + host + ": its name did not resolve, the connection was refused, or TLS " +
			"failed. Nothing was read, so this says nothing about the Series.",
		"This is most often our side: check this machine's network and DNS (" + networkCheck(site) + "). " +
			"If that works here, the Site may be down or have moved; Test read shows where the read stopped."}
}

// siteHost is the Site's own first host, the one its checks name.
func siteHost(site string) string {
	if a, ok := adapters.ByName(site); ok && len(a.Domains()) > 0 {
		return a.Domains()[0]
	}
	return site
}

// networkCheck is what the owner runs on the server to test our side of a
// plain Site's unreachable (docs/adr/0022).
func networkCheck(site string) string { return "curl -sI https://" + siteHost(site) }

// routeOf is the Route a Site is read over, from whether it is a browser
// Site: an outcome's plain words depend on it (word.Outcome.PlainOn).
func routeOf(browser bool) word.Route {
	if browser {
		return word.RouteBrowser
	}
	return word.RoutePlain
}
