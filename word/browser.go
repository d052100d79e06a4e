package word

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// DefaultBrowserSites is BROWSER_SITES when unset: the Sites behind an
// anti-bot challenge that a plain client cannot pass (CONTEXT.md, Browser
// route).
const DefaultBrowserSites = string(Comix) + "," + string(Kagane)

// BrowserSites is the set of Sites read through the browser sidecar
// (BROWSER_SITES): the configuration, the Reader, the notifier and the admin
// pages all hold this one set. A Site absent from it is read over plain HTTPS.
type BrowserSites map[Site]bool

// ParseBrowserSites reads BROWSER_SITES: comma-separated Site names. ""
// means DefaultBrowserSites; "none" means no Site.
func ParseBrowserSites(s string) (BrowserSites, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		s = DefaultBrowserSites
	}
	out := BrowserSites{}
	if strings.EqualFold(s, "none") {
		return out, nil
	}
	for site := range strings.SplitSeq(s, ",") {
		site = strings.TrimSpace(site)
		if site == "" {
			continue
		}
		if !KnownSite(site) {
			return nil, fmt.Errorf("BROWSER_SITES: unknown site %q", site)
		}
		out[Site(site)] = true
	}
	return out, nil
}

// Has reports whether the Site is read through the sidecar.
func (b BrowserSites) Has(s Site) bool { return b[s] }

// Route is the Route the Site is read over.
func (b BrowserSites) Route(s Site) Route {
	if b.Has(s) {
		return RouteBrowser
	}
	return RoutePlain
}

// Names lists the set's Sites in alphabetical order; never nil.
func (b BrowserSites) Names() []string {
	out := []string{}
	for _, s := range slices.Sorted(maps.Keys(b)) {
		if b[s] {
			out = append(out, string(s))
		}
	}
	return out
}
