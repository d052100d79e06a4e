package adapters

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
)

func kaganeListed(t *testing.T, id, chapter string) ListingEntry {
	t.Helper()
	return listedAs(t, "kagane", id, "https://kagane.to/series/"+id, chapter)
}

func TestKaganeListingReadsItsFixtures(t *testing.T) {
	porter := kaganeListed(t, "019c2b1c-cc9b-745f-afed-09c230759162", "40")
	knight := kaganeListed(t, "019c3d2e-0a0b-7c0d-8e0f-101112131415", "87.5")
	hua := kaganeListed(t, "019c4e5f-6071-7283-9495-a6b7c8d9e0f1", "1209")
	page := Listing{Entries: []ListingEntry{porter, knight, hua}, More: true}
	dir := filepath.Join("listings", "kagane")
	// page.json also holds a row naming no Kagane Series, another Series'
	// book inside a row, a volume-only book and a row without books.
	readsListing(t, "kagane", dir, "page.json", page)
	readsListing(t, "kagane", dir, "last.json", Listing{Entries: []ListingEntry{kaganeListed(t, "019c7182-93a4-75b6-c7d8-e9f001122334", "61")}})
	readsListing(t, "kagane", dir, "empty.json", Listing{Entries: []ListingEntry{}})
	listingFiles(t, dir, "page.json", "last.json", "empty.json")

	variants := filepath.Join("variants", "listings", "kagane")
	for _, file := range listingVariants(t, "kagane", []string{
		"reordered.json",    // keys reordered, upper-case ids, numbers as JSON numbers, a sort_no fallback, a malformed row, a path in series_id
		"repeated.json",     // a Series listed twice (its highest kept), another Series' book, a numeric series_id
		"wrapped-keys.json", // Spring paging keys around the rows, a related strip inside a row, labels instead of bare numbers
	}) {
		readsListing(t, "kagane", variants, file, page)
	}
}

func TestKaganeListingRefusesWhatIsNotItsListing(t *testing.T) {
	notAListing(t, "kagane", readFixture(t, "challenge", "cloudflare.html"))
	notAListing(t, "kagane", readFixture(t, "kagane", "completed.json"))
	notAListing(t, "kagane", []byte(`{"content": null, "last": true}`))
	notAListing(t, "kagane", []byte(`[{"series_id": "019c2b1c-cc9b-745f-afed-09c230759162"}]`))
}

// The address and paging the reference sends (0-based page, 35 a page, by
// update time), and the filter body it posts there.
func TestKaganeListingTarget(t *testing.T) {
	k := kagane{}
	for page, want := range map[int]string{
		1: "https://kagane.to/api/v2/search/series?page=0&size=35&sort=updated_at,desc",
		2: "https://kagane.to/api/v2/search/series?page=1&size=35&sort=updated_at,desc",
	} {
		if got := k.ListingTarget(page); got != (Target{URL: want, API: true, Body: kaganeListingBody}) {
			t.Errorf("ListingTarget(%d) = %+v, want %s (API, POST of kaganeListingBody)", page, got, want)
		}
	}
	var body struct {
		SourceType  []string `json:"source_type"`
		ContentLang []string `json:"content_lang"`
	}
	if err := json.Unmarshal([]byte(kaganeListingBody), &body); err != nil || len(body.SourceType) != 3 || !reflect.DeepEqual(body.ContentLang, []string{"en"}) {
		t.Errorf("kaganeListingBody = %s (%v)", kaganeListingBody, err)
	}
}
