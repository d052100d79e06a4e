package adapters

import (
	"path/filepath"
	"testing"
)

func novelfullListed(t *testing.T, slug, chapter string) ListingEntry {
	t.Helper()
	return listedAs(t, "novelfull", slug, "https://novelfull.com/"+slug+".html", chapter)
}

func TestNovelfullListingReadsItsFixtures(t *testing.T) {
	page := Listing{Entries: []ListingEntry{
		novelfullListed(t, "martial-peak", "6009"),
		novelfullListed(t, "reverend-insanity", "2334.5"),
		novelfullListed(t, "coiling-dragon", "806"),
	}, More: true}
	dir := filepath.Join("listings", "novelfull")
	// page.html also holds an ad row, a lookalike host, a genre link, a row
	// whose chapter is not a number ("Side Story 3"), a row whose chapter link
	// is another Series', and the sidebar's "Hot Novels".
	readsListing(t, "novelfull", dir, "page.html", page)
	readsListing(t, "novelfull", dir, "last.html", Listing{Entries: []ListingEntry{novelfullListed(t, "i-shall-seal-the-heavens", "1614")}})
	readsListing(t, "novelfull", dir, "empty.html", Listing{Entries: []ListingEntry{}})
	listingFiles(t, dir, "page.html", "last.html", "empty.html")

	variants := filepath.Join("variants", "listings", "novelfull")
	for _, file := range listingVariants(t, "novelfull", []string{
		"rows-wrapped.html", // rows wrapped, cells reordered, the number split across spans, the pagination first, "Hot Novels" inside the list
		"list-novel.html",   // tsundoku's div.list-novel layout, absolute and novelfull.net addresses, two chapters in a cell, "C806", the next page as li.active + li
		"archive-rows.html", // LNReader's bare .archive column inside a .row, a row without the row class, a Series listed twice, a javascript: link
	}) {
		readsListing(t, "novelfull", variants, file, page)
	}
}

func TestNovelfullListingRefusesWhatIsNotItsListing(t *testing.T) {
	notAListing(t, "novelfull", readFixture(t, "challenge", "cloudflare.html"))
	// A Series page carries the sidebar's .list-truyen.list-side: not a listing.
	notAListing(t, "novelfull", readFixture(t, "novelfull", "completed.html"))
}

// The address LNReader's template builds: /latest-release-novel?page=N.
func TestNovelfullListingTarget(t *testing.T) {
	n := novelfull{}
	for page, want := range map[int]string{
		1: "https://novelfull.com/latest-release-novel?page=1",
		2: "https://novelfull.com/latest-release-novel?page=2",
	} {
		if got := n.ListingTarget(page); got != (Target{URL: want}) {
			t.Errorf("ListingTarget(%d) = %+v, want %s", page, got, want)
		}
	}
}
