package adapters

import (
	"errors"

	"github.com/mangabookmark/mangabookmark/word"
)

// Listing is what one page of a Site's latest-updates listing says
// (CONTEXT.md, Listing): the Series that just got a chapter, each with the
// newest chapter its row names, and whether a next page exists. It is a
// hint: only a read of the Series' own page writes its Latest Chapter.
type Listing struct {
	Entries []ListingEntry
	// More is true when the page links to a next page.
	More bool
}

// ListingEntry is one row of a listing: the Series as Recognise names it
// (the Site's own address, canonical), and the newest chapter the row names,
// read the way a Series page reads its chapter numbers.
type ListingEntry struct {
	Ref     Ref
	Chapter word.Chapter
}

// Lister is an Adapter that reads its Site's latest-updates listing. Every
// adapter implements it (TestEveryAdapterReadsAListing).
type Lister interface {
	// ListingTarget is what to fetch for a page of the listing, 1 being the
	// newest; an address on the Site's real host, as Target's are.
	ListingTarget(page int) Target
	// ParseListing reads a fetched listing page. It never fetches. Rows that
	// are not the Site's own Series (another host, a promo, a "related"
	// strip) and rows without a readable chapter number are left out; one
	// Series listed twice keeps its highest chapter. An error wraps
	// ErrNotListing when the page's anchor is missing (a challenge, a
	// changed layout): that is never read as "no updates".
	ParseListing(body []byte) (Listing, error)
}

// ListingReadySelector is implemented by adapters whose listing page is read
// on the browser route: the route waits for this CSS selector on a listing
// page instead of the Series page's ReadySelector, which the listing lacks.
type ListingReadySelector interface {
	ListingReadySelector() string
}

// ErrNotListing is wrapped by ParseListing when the body is not the Site's
// listing at all.
var ErrNotListing = errors.New("not a listing page")

// MaxListingEntries bounds the entries one page yields: a real page lists a
// few dozen, so a longer one is not believed past this many.
const MaxListingEntries = 200

// ListerOf returns the Lister of a Site.
func ListerOf(site string) (Lister, bool) {
	a, ok := ByName(site)
	if !ok {
		return nil, false
	}
	l, ok := a.(Lister)
	return l, ok
}

// listingEntries is the shared tail of every ParseListing: keep each Series
// once with its highest chapter, in first-seen order, at most
// MaxListingEntries of them.
func listingEntries(rows []ListingEntry) []ListingEntry {
	at := make(map[string]int, len(rows))
	out := make([]ListingEntry, 0, len(rows))
	for _, r := range rows {
		if i, seen := at[r.Ref.SeriesID]; seen {
			if r.Chapter.Compare(out[i].Chapter) > 0 {
				out[i].Chapter = r.Chapter
			}
			continue
		}
		if len(out) == MaxListingEntries {
			continue
		}
		at[r.Ref.SeriesID] = len(out)
		out = append(out, r)
	}
	return out
}
