package adapters

import (
	"path/filepath"
	"testing"
)

func lnwListed(t *testing.T, slug, chapter string) ListingEntry {
	t.Helper()
	return listedAs(t, "lightnovelworld", slug, "https://lightnovelworld.org/novel/"+slug+"/", chapter)
}

func TestLightnovelworldListingReadsItsFixtures(t *testing.T) {
	page := Listing{Entries: []ListingEntry{
		lnwListed(t, "shadow-slave", "3105"),
		lnwListed(t, "the-beginning-after-the-end", "12.5"),
		lnwListed(t, "lord-of-the-mysteries", "1432"),
	}, More: true}
	dir := filepath.Join("listings", "lightnovelworld")
	// page.html also holds the boosted "Trending This Week" shelf, an update
	// on another host, one linking to a genre list, one without a chapter
	// label, one whose label has no number, and the "Most Read" column.
	readsListing(t, "lightnovelworld", dir, "page.html", page)
	readsListing(t, "lightnovelworld", dir, "last.html", Listing{Entries: []ListingEntry{lnwListed(t, "release-that-witch", "1498")}})
	readsListing(t, "lightnovelworld", dir, "empty.html", Listing{Entries: []ListingEntry{}})
	listingFiles(t, dir, "page.html", "last.html", "empty.html")

	variants := filepath.Join("variants", "listings", "lightnovelworld")
	for _, file := range listingVariants(t, "lightnovelworld", []string{
		"day-groups.html",   // updates wrapped in day groups, the info first, og:url, the label's number in its own element, a lookalike host, the shelf after the footer
		"div-items.html",    // the item class on a div around the link, absolute, legacy-host and chapter addresses, two labels, a Series twice, an ads row, no address of its own
		"promo-inside.html", // the boosted shelf inside the list, attributes reordered, "Ch." labels, a search link, a ranking item that is not an update
	}) {
		readsListing(t, "lightnovelworld", variants, file, page)
	}
}

func TestLightnovelworldListingRefusesWhatIsNotItsListing(t *testing.T) {
	notAListing(t, "lightnovelworld", readFixture(t, "challenge", "cloudflare.html"))
	notAListing(t, "lightnovelworld", readFixture(t, "lightnovelworld", "completed.html"))
	// Naming another page, or /updates/ on another host, is not the updates page.
	notAListing(t, "lightnovelworld", []byte(`<html><head><link rel="canonical" href="https://lightnovelworld.org/ranking/"></head><body></body></html>`))
	notAListing(t, "lightnovelworld", []byte(`<html><head><meta property="og:url" content="https://example.net/updates/"></head><body></body></html>`))
}

// /updates/ is Kodama's address; a later page takes ?page=N as the site's
// other lists do.
func TestLightnovelworldListingTarget(t *testing.T) {
	a := lightnovelworld{}
	for page, want := range map[int]string{
		1: "https://lightnovelworld.org/updates/",
		2: "https://lightnovelworld.org/updates/?page=2",
	} {
		if got := a.ListingTarget(page); got != (Target{URL: want}) {
			t.Errorf("ListingTarget(%d) = %+v, want %s", page, got, want)
		}
	}
}
