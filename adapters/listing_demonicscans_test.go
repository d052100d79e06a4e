package adapters

import (
	"path/filepath"
	"testing"
)

func TestDemonicscansListing(t *testing.T) {
	const site = "demonicscans"
	demonic := func(id, chapter string) ListingEntry {
		return listedAs(t, site, id, "https://demonicscans.org/manga/"+id, chapter)
	}
	dir := filepath.Join("listings", site)
	// The toffee card (an ad), the off-site mirror, the notice linking to a
	// browse page, the card without a chapter number, the sidebar's Martial
	// Peak 9995 and Martial Peak's off-site chapter link 9994 never count;
	// Solo Leveling's link to another title's chapter 9996 is not its
	// chapter; Mr. Magical Girl listed again lower keeps 89.
	latest := Listing{Entries: []ListingEntry{
		demonic("Mr.-Magical-Girl", "89"),
		demonic("Martial-Peak", "3672"),
		demonic("Mr-Devourer%252C-Please-Act-Like-a-Final-Boss", "12.5"),
		demonic("Solo-Leveling-Ragnarok", "45"),
	}, More: true}
	readsListing(t, site, dir, "latest.html", latest)
	readsListing(t, site, dir, "last.html", Listing{Entries: []ListingEntry{
		demonic("Tales-of-Demons-and-Gods", "480.5"),
		demonic("The-Beginning-After-The-End", "175"),
		demonic("Apotheosis", "1002"),
	}})
	readsListing(t, site, dir, "empty.html", Listing{Entries: []ListingEntry{}})
	listingFiles(t, dir, "latest.html", "last.html", "empty.html")

	variants := filepath.Join("variants", "listings", site)
	for _, file := range listingVariants(t, site, []string{
		"wrapped.html",   // each card wrapped, the cards in a grid inside the container
		"reordered.html", // sidebar and pagination first, info before thumb, chapters oldest first
		"moved.html",     // the container after the footer, h3 titles, chapter rows as a list, the badge on the thumb
	}) {
		readsListing(t, site, variants, file, latest)
	}

	notAListing(t, site, readFixture(t, "challenge", "cloudflare.html"))
	notAListing(t, site, readFixture(t, "demonicscans", "ongoing.html"))
}

func TestDemonicscansListingTarget(t *testing.T) {
	l, _ := ListerOf("demonicscans")
	for page, want := range map[int]string{
		1: "https://demonicscans.org/lastupdates.php?list=1",
		2: "https://demonicscans.org/lastupdates.php?list=2",
	} {
		if got := l.ListingTarget(page); got != (Target{URL: want}) {
			t.Errorf("ListingTarget(%d) = %+v, want %s", page, got, want)
		}
	}
}
