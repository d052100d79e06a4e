package handlers

import (
	"fmt"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/poller/schedule"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// A Lane's reach and listing as both owner pages say them, from what the
// database holds (migration 0034): since when the Lane's requests have
// reached nothing, and its listing's last attempt. Nothing here reads a
// process's memory, so a restart changes nothing these pages say, and each
// age runs from the first recorded occurrence (CONTEXT.md, Lane state).

// reachOf is the Lanes page's row as the facts /admin reads.
func reachOf(l store.AdminLane) store.LaneReach {
	return store.LaneReach{Site: l.Site, UnreachedSince: l.UnreachedSince, ListingOutcome: l.Outcome,
		ListingFailingSince: l.FailingSince, ListingEmptySince: l.ListingEmptySince}
}

// unreached is since when a plain Lane has reached nothing of its Site, its
// listing included (docs/adr/0022), or false. On the browser route the
// sidecar is what went unanswered, and the sidecar's own state says so.
func unreached(d Deps, r store.LaneReach) (time.Time, bool) {
	if d.browserSite(r.Site) {
		return time.Time{}, false
	}
	if r.UnreachedSince.IsZero() && r.ListingOutcome == word.Unreachable && !r.ListingFailingSince.IsZero() && !d.ListingOff {
		// The listing's own record, when the pass log holds nothing newer.
		return r.ListingFailingSince, true
	}
	return r.UnreachedSince, !r.UnreachedSince.IsZero()
}

// listingFailing is since when the listing's attempts have failed, or
// false; an unreachable sidecar's is the sidecar's state, not the
// listing's, and a listing that is off says nothing.
func listingFailing(d Deps, r store.LaneReach) (time.Time, bool) {
	failing := !d.ListingOff && r.ListingOutcome.ListingFailed() && !r.ListingFailingSince.IsZero()
	if r.ListingOutcome == word.Unreachable && d.browserSite(r.Site) {
		failing = false
	}
	return r.ListingFailingSince, failing
}

// laneFaultOf is a Lane fault that is no owner notice (ADR 0016, Revised):
// past ownerWindow, a plain Lane that has reached nothing of its Site, a
// listing refused, unreachable or failing, or a Broken listing. Each makes
// the product slower, never untrue: the Series are still read by their own
// pace. text is a clause naming the Lane with its age; fix its repair.
func laneFaultOf(d Deps, r store.LaneReach, now time.Time) (text, fix string, ok bool) {
	old := func(t time.Time) bool { return now.Sub(t) >= word.OwnerWindow }
	if at, ok := unreached(d, r); ok && old(at) {
		return "the " + r.Site + " Lane unable to reach " + siteHost(r.Site) + " for " + since(now, at) +
			", its listing included: no new chapter is found", networkFix(r.Site), true
	}
	if at, ok := listingFailing(d, r); ok && old(at) {
		return "the " + r.Site + " listing " + r.ListingOutcome.ListingPlain(routeOf(d.browserSite(r.Site))) +
			" for " + since(now, at) + ": new chapters are found by the Series' own pace only", listingFix(d, r), true
	}
	if brokenListing(d, r, now) {
		return "the " + r.Site + " listing naming no Series for " + since(now, r.ListingEmptySince) +
				": its reader no longer matches the page, so new chapters are found by the Series' own pace only",
			"update mangabookmark", true
	}
	return "", "", false
}

// brokenListing reports whether the Lane's listing is Broken (ADR 0016).
func brokenListing(d Deps, r store.LaneReach, now time.Time) bool {
	return !d.ListingOff && schedule.Broken(r.ListingEmptySince, now)
}

// laneEarlyOf is the same facts younger than ownerWindow, as "too early to
// tell" names them: a plain Lane reaching nothing is our network, most
// often, and says so with its check.
func laneEarlyOf(d Deps, r store.LaneReach, now time.Time) (string, bool) {
	if at, ok := unreached(d, r); ok {
		return "the " + r.Site + " Lane unable to reach " + siteHost(r.Site) + " for " + since(now, at) +
			": check this machine's network and DNS (" + networkCheck(r.Site) + ")", true
	}
	if at, ok := listingFailing(d, r); ok {
		return "the " + r.Site + " listing " + r.ListingOutcome.ListingPlain(routeOf(d.browserSite(r.Site))) +
			" for " + since(now, at), true
	}
	return "", false
}

// networkFix is the repair of a plain Site not reached.
func networkFix(site string) string {
	return "check this machine's network and DNS (" + networkCheck(site) + "); if that works here, the Site may be down or have moved"
}

// listingFix is the repair of a listing that fails on a Site the Lane
// reaches (or a listing alone it does not).
func listingFix(d Deps, r store.LaneReach) string {
	switch {
	case r.ListingOutcome == word.Unreachable:
		return networkFix(r.Site)
	case r.ListingOutcome == word.Refused && !d.browserSite(r.Site):
		return word.NoBrowserRoute.Repair(r.Site)
	}
	return "open the Site's latest-updates page in a browser; if it works there, update mangabookmark"
}

// listingState is the Lane's listing line on the Lanes page: its last
// attempt in plain words with its age, what a failing listing costs in
// reads, and the Lane fault once it is one (laneFaultOf) or the listing is
// Broken.
func listingState(d Deps, l store.AdminLane, now time.Time) (state, cost, fault string) {
	r := reachOf(l)
	text, fix, ok := laneFaultOf(d, r, now)
	switch {
	case ok && brokenListing(d, r, now) && strings.HasPrefix(fix, "update"):
		// The Broken listing's own sentence (ADR 0016).
		fault = fmt.Sprintf("The %s listing has named no Series for %s: its reader no longer matches the page. "+
			"To fix: update mangabookmark. Until then this Lane reads by cadence and the backstop alone.",
			l.Site, since(now, l.ListingEmptySince))
	case ok:
		fault = sentence(text) + " To fix: " + fix + "."
	}
	switch {
	case d.ListingOff:
		return "listing off (LISTING_EVERY=0)", "", fault
	case l.TriedAt.IsZero() && l.ListingReadAt.IsZero():
		return "listing not read yet", "", fault
	}
	if l.Outcome.ListingFailed() {
		at := l.FailingSince
		if at.IsZero() {
			at = l.TriedAt
		}
		state = "listing " + l.Outcome.ListingPlain(routeOf(d.browserSite(l.Site))) + " for " + since(now, at)
		if !l.ListingReadAt.IsZero() {
			state += ", last read " + ago(now, l.ListingReadAt)
		}
		return state, fallbackWords(d, l), fault
	}
	read := l.TriedAt
	if read.IsZero() || l.ListingReadAt.After(read) {
		read = l.ListingReadAt
	}
	state = "listing read " + ago(now, read)
	if l.Outcome == word.OK || l.Entries > 0 {
		state += fmt.Sprintf(": %s, %d marked", entries(l.Entries), l.Marked)
	}
	switch {
	case schedule.Broken(l.ListingEmptySince, now):
		// The fault says how long it has named none.
		cost = fallbackWords(d, l)
	case !l.ListingEmptySince.IsZero():
		state += ", named no Series for " + since(now, l.ListingEmptySince)
	}
	return state, cost, fault
}

// entries is "1 entry" or "N entries".
func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}

// fallbackWords is what a listing that finds nothing costs, in the
// owner's unit: how often each Series is read, so how soon a new chapter
// can be found (schedule.Policy.FallbackEvery at the Lane's size).
func fallbackWords(d Deps, l store.AdminLane) string {
	p := schedule.Policy{Floor: d.PollEvery[l.Site]}
	every := p.FallbackEvery(l.Pollable, d.Spacing)
	return fmt.Sprintf("New chapters found by the Series' own pace only: about every %s at this size (%s).",
		word.Age(every), seriesCount(l.Pollable))
}

// seriesCount is "1 Series" or "N Series".
func seriesCount(n int64) string {
	return fmt.Sprintf("%d Series", n)
}
