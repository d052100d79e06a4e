package adapters

import (
	"path/filepath"
	"testing"
)

func TestComixListing(t *testing.T) {
	const site = "comix"
	comixEntry := func(hid, path, chapter string) ListingEntry {
		return listedAs(t, site, hid, "https://comix.to/title/"+path, chapter)
	}
	dir := filepath.Join("listings", site)
	// The trending query after the browse list (9997 for a listed Series),
	// the mirror host, the news page and the row without a latestChapter
	// never count; Lone Archer names itself by hid alone; The Spark listed
	// again lower keeps 67; 150.0 reads 150, above the old API's
	// latest_chapter 149 on the same row.
	latest := Listing{Entries: []ListingEntry{
		comixEntry("k7yg7", "k7yg7-the-spark-in-your-eyes", "67"),
		comixEntry("p2m8q", "p2m8q-sword-emperor", "12.5"),
		comixEntry("q9w8e", "q9w8e-return-of-the-frozen-player", "150"),
		comixEntry("m3n4b", "m3n4b", "41"),
	}, More: true}
	readsListing(t, site, dir, "latest.html", latest)
	readsListing(t, site, dir, "last.html", Listing{Entries: []ListingEntry{
		comixEntry("v5c6x", "v5c6x-moonlit-garden", "88"),
		comixEntry("b7n8m", "b7n8m-iron-vow", "23.5"),
		comixEntry("h1j2k", "h1j2k-northern-blade", "204"),
	}})
	readsListing(t, site, dir, "empty.html", Listing{Entries: []ListingEntry{}})
	listingFiles(t, dir, "latest.html", "last.html", "empty.html")

	variants := filepath.Join("variants", "listings", site)
	for _, file := range listingVariants(t, site, []string{
		"api-body.json",      // the same result served bare, as the API answers
		"after-footer.html",  // initial-data after the footer, pagination.last_page, each row's keys reversed
		"extra-queries.html", // a detail and a genres query before the list, pretty-printed, only hasNext
	}) {
		readsListing(t, site, variants, file, latest)
	}

	notAListing(t, site, readFixture(t, "challenge", "cloudflare.html"))
	notAListing(t, site, readFixture(t, "comix", "ongoing.html")) // its recommended strip holds items, but no result
}

// An encrypted API body is only readable in the browser: it is not a listing,
// never an empty one.
func TestComixEncryptedListingIsNotAListing(t *testing.T) {
	notAListing(t, "comix", []byte(`{"e":"q83vEjRWeJA="}`))
}

func TestComixListingTarget(t *testing.T) {
	l, _ := ListerOf("comix")
	for page, want := range map[int]string{
		1: "https://comix.to/browse?order%5Bchapter_updated_at%5D=desc&page=1",
		2: "https://comix.to/browse?order%5Bchapter_updated_at%5D=desc&page=2",
	} {
		if got := l.ListingTarget(page); got != (Target{URL: want}) {
			t.Errorf("ListingTarget(%d) = %+v, want %s", page, got, want)
		}
	}
}
