package adapters

import (
	"bytes"
	"fmt"
	"net/url"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/word"
)

// Demonic Scans' latest-updates listing is lastupdates.php?list=<page>, the
// page keiyoushi's latestUpdatesRequest and Kotatsu's newest order read. Like
// them, a row is an .updates-element card of #updates-container, named by the
// first link of its info block, and a card carrying a .toffee-badge is an ad
// (keiyoushi's :not(:has(.toffee-badge))). The cards are selected at any depth
// under the container, not only as its direct children (doc.go, "Where an
// adapter may look"); the same cards outside it (a sidebar) are not the list.
const (
	demonicListingURL      = "https://" + demonicHost + "/lastupdates.php?list=%d"
	demonicListingAnchor   = "#updates-container"
	demonicListingRows     = ".updates-element"
	demonicListingPromo    = ".toffee-badge"
	demonicListingSeries   = ".updates-element-info a[href]"
	demonicListingChapters = "a.chplinks"
	demonicListingNext     = `.pagination a:contains("Next")`
	// demonicReaderPath is the reader address the listing's chapter links use,
	// chaptered.php?manga=<id>&chapter=<n>, written relative to the page.
	demonicReaderPath   = "/chaptered.php"
	demonicReaderSeries = "manga"
	demonicReaderNumber = "chapter"
)

// ListingTarget is the page-th page of lastupdates.php.
func (demonicscans) ListingTarget(page int) Target {
	return Target{URL: fmt.Sprintf(demonicListingURL, listingPage(page))}
}

// ParseListing reads lastupdates.php. The anchor is #updates-container: a page
// without it (a challenge, a changed layout) is not the listing.
func (a demonicscans) ParseListing(body []byte) (Listing, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return Listing{}, fmt.Errorf("demonicscans: %w", err)
	}
	box := doc.FindMatcher(sel(demonicListingAnchor)).First()
	if box.Length() == 0 {
		return Listing{}, fmt.Errorf("demonicscans: no %s: %w", demonicListingAnchor, ErrNotListing)
	}
	base, _ := url.Parse(fmt.Sprintf(demonicListingURL, 1))
	var entries []ListingEntry
	box.FindMatcher(sel(demonicListingRows)).Each(func(_ int, row *goquery.Selection) {
		if row.IsMatcher(sel(demonicListingPromo)) || row.FindMatcher(sel(demonicListingPromo)).Length() > 0 {
			return
		}
		ref, ok := listedSeries(a, base, row.FindMatcher(sel(demonicListingSeries)).First().AttrOr("href", ""))
		if !ok {
			return
		}
		l := latest{site: a}
		row.FindMatcher(sel(demonicListingChapters)).Each(func(_ int, s *goquery.Selection) {
			if num, u, ok := demonicListedChapter(base, s, ref.SeriesID); ok {
				l.offer(num, u)
			}
		})
		if l.num != "" {
			entries = append(entries, ListingEntry{Ref: ref, Chapter: word.Chapter(l.num)})
		}
	})
	more := doc.FindMatcher(sel(demonicListingNext)).Length() > 0
	return Listing{Entries: listingEntries(entries), More: more}, nil
}

// demonicListedChapter reads one chapter link of a card, the highest of which
// is the card's chapter (a card lists its newest few, and names each twice:
// the label and the date link to the same address). The reader address
// chaptered.php carries the number in its chapter parameter; the chapter
// address of the Series page (/title/<Title>/chapter/<n>) is read as the
// Series page reads it, and counts only for the card's own Series.
func demonicListedChapter(base *url.URL, s *goquery.Selection, id string) (num, abs string, ok bool) {
	abs = cleanURL(base, s.AttrOr("href", ""))
	u, err := url.Parse(abs)
	if abs == "" || err != nil {
		return "", "", false
	}
	if u.Path != demonicReaderPath {
		return demonicChapter(base, s, id)
	}
	q := u.Query()
	if q.Get(demonicReaderSeries) == "" {
		return "", "", false
	}
	if num, ok = chapterNumber(q.Get(demonicReaderNumber)); !ok {
		num, ok = ParseChapterNumber(ownText(s))
	}
	return num, abs, ok
}
