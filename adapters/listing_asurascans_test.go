package adapters

import (
	"path/filepath"
	"testing"
)

func TestAsurascansListing(t *testing.T) {
	const site = "asurascans"
	asura := func(slug, chapter string) ListingEntry {
		return listedAs(t, site, slug, "https://asurascans.com/comics/"+slug, chapter)
	}
	dir := filepath.Join("listings", site)
	// The premium 271 is not readable yet; nano-machine listed again lower
	// keeps 270; the all-premium row, the off-site promo, the news page and
	// the row without chapters never count.
	latest := Listing{Entries: []ListingEntry{
		asura("nano-machine", "270"),
		asura("omniscient-readers-viewpoint", "12.5"),
		asura("the-dark-mage-returns", "113"),
		asura("swordmasters-youngest-son", "150"),
	}, More: true}
	readsListing(t, site, dir, "latest.json", latest)
	readsListing(t, site, dir, "last.json", Listing{Entries: []ListingEntry{
		asura("tomb-raider-king", "371"),
		asura("return-of-the-mount-hua-sect", "140.5"),
		asura("i-killed-an-academy-player", "52"),
	}})
	readsListing(t, site, dir, "empty.json", Listing{Entries: []ListingEntry{}})
	listingFiles(t, dir, "latest.json", "last.json", "empty.json")

	variants := filepath.Join("variants", "listings", site)
	for _, file := range listingVariants(t, site, []string{
		"reordered.json",      // keys reordered, chapters oldest first, coverUrl
		"slug-only.json",      // the Site's own rows name themselves by slug alone
		"string-numbers.json", // numbers as strings ("12.50"), meta reshaped
	}) {
		readsListing(t, site, variants, file, latest)
	}

	notAListing(t, site, readFixture(t, "challenge", "cloudflare.html"))
	notAListing(t, site, readFixture(t, "asurascans", "ongoing.html"))
}

func TestAsurascansListingTarget(t *testing.T) {
	l, _ := ListerOf("asurascans")
	for page, want := range map[int]string{
		1: "https://api.asurascans.com/api/series?offset=0&limit=20&sort=latest&order=desc",
		2: "https://api.asurascans.com/api/series?offset=20&limit=20&sort=latest&order=desc",
	} {
		if got := l.ListingTarget(page); got != (Target{URL: want, API: true}) {
			t.Errorf("ListingTarget(%d) = %+v, want %s (API)", page, got, want)
		}
	}
}
