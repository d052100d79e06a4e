package word

import (
	"fmt"
	"strings"
)

// NoticeKind is one of the four owner-notice conditions: the embed's footer,
// owner_notices.kind and the verdict line's tag (CONTEXT.md, Owner notice).
type NoticeKind string

// The four kinds.
const (
	Stall          NoticeKind = "stall"
	NoBrowserRoute NoticeKind = "no-browser-route"
	SidecarDown    NoticeKind = "sidecar-down"
	AdapterBroken  NoticeKind = "adapter-broken"
)

// NoticeKinds lists the four in the order the verdict line reads them.
var NoticeKinds = []NoticeKind{Stall, NoBrowserRoute, SidecarDown, AdapterBroken}

// SidecarSubject is how a notice about the browser sidecar (site "") names
// what it is about.
const SidecarSubject = "browser sidecar"

// Subject names what a notice of k about site is about: the Site, or the
// browser sidecar for SidecarDown.
func (k NoticeKind) Subject(site string) string {
	if k == SidecarDown {
		return SidecarSubject
	}
	return site
}

// Fault is the clause that says what has gone wrong for how long: the
// verdict line shows it, and the embed's sentence opens with it. age is
// already written by Age.
func (k NoticeKind) Fault(site, age string) string {
	switch k {
	case Stall:
		return fmt.Sprintf("the %s Lane has owed Polls and made none, with nothing to say for it, for %s", site, age)
	case NoBrowserRoute:
		return fmt.Sprintf("%s, a Site with no browser route, has refused every Poll for %s", site, age)
	case SidecarDown:
		return fmt.Sprintf("no browser Lane has reached the %s for %s", SidecarSubject, age)
	case AdapterBroken:
		return fmt.Sprintf("more than half of %s Series have yielded no chapter for %s", Possessive(site), age)
	}
	return fmt.Sprintf("%s: %s for %s", k.Subject(site), k, age)
}

// SidecarSetup is the step for a server with browser Sites and no sidecar
// configured (SkipNoBrowser): the README's `make sidecar`, and the address
// BROWSER_WS_URL then names (the remote allocator asks it for the browser's
// current endpoint). Issue 23, item 8.
const SidecarSetup = "start a sidecar with make sidecar, then restart the server with BROWSER_WS_URL=ws://127.0.0.1:9222"

// Repair is what the owner does about a notice of k.
func (k NoticeKind) Repair(site string) string {
	switch k {
	case Stall:
		return fmt.Sprintf("check that the server can reach %s, then force a Poll of the Lane", site)
	case NoBrowserRoute:
		return "give it a browser route in BROWSER_SITES and deploy"
	case SidecarDown:
		return "start the sidecar or fix BROWSER_WS_URL"
	case AdapterBroken:
		return "its adapter no longer reads the Site's pages, so fix the adapter and deploy"
	}
	return ""
}

// Sentence is the whole message of a notice: the fault, then the repair.
func (k NoticeKind) Sentence(site, age string) string {
	s := k.Fault(site, age)
	if site == "" || !strings.HasPrefix(s, site) {
		s = strings.ToUpper(s[:1]) + s[1:] // a Site's name keeps its own case
	}
	if r := k.Repair(site); r != "" {
		return s + "; " + r + "."
	}
	return s + "."
}
