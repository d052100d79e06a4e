package adapters

import (
	"bytes"
	"fmt"
	"net/url"
	"strconv"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/word"
)

// NovelFull's latest-updates listing is /latest-release-novel?page=N, a plain
// page (LNReader's readnovelfull template and tsundoku's NovelFull read it).
// The list sits in the main column: tsundoku scopes its rows to div.archive
// and div.list-novel, LNReader to an element whose class names archive, the
// third-party scrapers to .list-truyen. The sidebar's "Hot Novels" uses the
// same markup in .list-truyen.list-side: it is never the listing, wherever it
// sits. A row is the Series' h3.truyen-title link (LNReader and tsundoku push
// only rows that have it) and the chapter link in its .text-info cell (the
// scrapers' .text-info a), which counts only when its address is a chapter of
// that row's Series (novelfullChapter, as on the Series page).
const (
	novelfullListingPath    = "/latest-release-novel"
	novelfullListingAnchor  = ".archive, .list-novel, .list-truyen:not(.list-side)"
	novelfullListingSide    = ".list-side"
	novelfullListingTitle   = "h3.truyen-title a"
	novelfullListingRow     = ".row"
	novelfullListingChapter = ".text-info a"
	// novelfullListingNext is tsundoku's next-page signal, a disabled item
	// never counting.
	novelfullListingNext = "ul.pagination li.next:not(.disabled) a, ul.pagination li.active + li:not(.disabled) a"
)

// ListingTarget is /latest-release-novel?page=N, page 1 included, as LNReader
// builds it.
func (novelfull) ListingTarget(page int) Target {
	return Target{URL: "https://" + novelfullHost + novelfullListingPath + "?page=" + strconv.Itoa(listingPage(page))}
}

// ParseListing reads a latest-release page. A page without the list's
// container is not a listing; a container without rows is an empty one.
func (a novelfull) ParseListing(body []byte) (Listing, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return Listing{}, fmt.Errorf("novelfull: %w", err)
	}
	lists := doc.FindMatcher(sel(novelfullListingAnchor))
	if lists.Length() == 0 {
		return Listing{}, fmt.Errorf("novelfull: no %s: %w", novelfullListingAnchor, ErrNotListing)
	}
	base := baseURL(a, Ref{})
	var rows []ListingEntry
	lists.FindMatcher(sel(novelfullListingTitle)).Each(func(_ int, s *goquery.Selection) {
		if e, ok := a.listingRow(base, s); ok {
			rows = append(rows, e)
		}
	})
	more := doc.FindMatcher(sel(novelfullListingNext)).Length() > 0
	return Listing{Entries: listingEntries(rows), More: more}, nil
}

// listingRow reads the row of one Series link: the link must be a NovelFull
// Series address, and the row's number is the highest of its chapter links
// that are that Series' own chapters.
func (a novelfull) listingRow(base *url.URL, title *goquery.Selection) (ListingEntry, bool) {
	if title.ClosestMatcher(sel(novelfullListingSide)).Length() > 0 {
		return ListingEntry{}, false
	}
	ref, ok := listedSeries(a, base, title.AttrOr("href", ""))
	if !ok {
		return ListingEntry{}, false
	}
	row := title.ClosestMatcher(sel(novelfullListingRow))
	if row.Length() == 0 {
		row = title.Parent().Parent()
	}
	l := latest{site: a}
	row.FindMatcher(sel(novelfullListingChapter)).Each(func(_ int, s *goquery.Selection) {
		if num, u, ok := novelfullChapter(base, s, ref.SeriesID); ok {
			l.offer(num, u)
		}
	})
	if l.num == "" {
		return ListingEntry{}, false
	}
	return ListingEntry{Ref: ref, Chapter: word.Chapter(l.num)}, true
}
