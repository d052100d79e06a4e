// Package word is the one home of the system's words: the Sites and their
// Kind, the Outcome a Poll ends in, the Skip value a pass writes, the Route a
// Site is read over and the set of browser Sites, the owner-notice kinds,
// ownerWindow, the chapter number's canonical form and order, the way an age
// is written, and Secret. Each is a typed constant here and nowhere else; the
// store builds its SQL predicates from these constants, so a renamed word
// cannot leave a query behind (CONTEXT.md, glossary).
//
// The package sits at the root and imports nothing of the project, so the
// parsers, the views and the store all reach it without reaching each other
// (docs/adr/0011).
package word

import (
	"slices"
	"strings"
	"time"
)

// Site is one of the six supported sources; each has an adapter and a Lane.
type Site string

// The six Sites.
const (
	Asurascans      Site = "asurascans"
	Demonicscans    Site = "demonicscans"
	Comix           Site = "comix"
	Kagane          Site = "kagane"
	Novelfull       Site = "novelfull"
	Lightnovelworld Site = "lightnovelworld"
)

// Sites lists the six Sites in display order.
var Sites = []Site{Asurascans, Demonicscans, Comix, Kagane, Novelfull, Lightnovelworld}

// SiteNames is Sites as plain strings, in the same order.
func SiteNames() []string {
	out := make([]string, len(Sites))
	for i, s := range Sites {
		out[i] = string(s)
	}
	return out
}

// SQL is s as an SQL string literal, for data written in SQL (the bench).
func (s Site) SQL() string { return sqlText(string(s)) }

// KnownSite reports whether s names one of the six Sites.
func KnownSite(s string) bool { return slices.Contains(Sites, Site(s)) }

// Possessive is name's possessive as the pages and messages write it: a bare
// apostrophe after a final s ("demonicscans' Series"), 's otherwise
// ("comix's Series"). The one place the rule lives.
func Possessive(name string) string {
	if strings.HasSuffix(name, "s") || strings.HasSuffix(name, "S") {
		return name + "'"
	}
	return name + "'s"
}

// OwnerWindow is the one threshold for "persisting": the admin filters and
// the owner notices both read it (CONTEXT.md, ownerWindow).
const OwnerWindow = 12 * time.Hour

// SightingReach is how far above the highest chapter a read of the Site's
// page has shown a Reader's Sighting may raise Latest Chapter (CONTEXT.md,
// Sighting): fifty chapters, weeks of a fast weekly release and more than a
// page lags, so an honest Sighting is never refused and a made-up one
// moves the number at most this far.
const SightingReach = 50

// Route is how a Site is read: over plain HTTPS or through the browser
// sidecar (CONTEXT.md, Browser route).
type Route string

// The two Routes.
const (
	RoutePlain   Route = "plain"
	RouteBrowser Route = "browser"
)

// sqlText quotes a word as an SQL string literal. The words are constants of
// this package, never input; the quote doubling is there all the same.
func sqlText(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
