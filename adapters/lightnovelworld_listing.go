package adapters

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/word"
)

// LightNovelWorld's latest-updates listing is /updates/ (Paperback's Kodama
// source reads it for its "Latest Updates"): each update is an
// a.ranking-item.chapter-item linking to the novel (/novel/<slug>/), its
// chapter named by the label in span.chapter-link ("Chapter 3105: Title"; the
// number after the chapter word, as Kodama reads it). The paid "Trending This
// Week" shelf (.boost-shelf-card, which Kodama reads as its own section) and
// the old template's .novel-item.ads are promotion, never an update, wherever
// they sit. Kodama reads only the first page; the site's lists state their
// extent in .pagination-info ("1-24 of 15288", noveldokusha reads it), so a
// next page is followed only when that says more remain.
const (
	lnwListingPath  = "/updates/"
	lnwListingItem  = ".ranking-item.chapter-item"
	lnwListingLink  = `a[href]`
	lnwListingLabel = "span.chapter-link"
	lnwListingPromo = ".boost-shelf-card, .boost-shelf, .novel-item.ads"
	lnwListingInfo  = ".pagination-info"
	// lnwListingSelf is where a page names its own address: an updates page
	// with no update on it is still the listing (empty), not a changed page.
	lnwListingSelf = `link[rel="canonical"], meta[property="og:url"]`
)

// lnwListingExtent reads "1-24 of 15288": the last row shown and the total.
var lnwListingExtent = regexp.MustCompile(`\d[\d,]*\s*[-–]\s*(\d[\d,]*)\s+of\s+(\d[\d,]*)`)

// ListingTarget is /updates/; a later page adds ?page=N, the parameter the
// site's other lists page by (advanced-search, genre lists). Only a page whose
// .pagination-info says more remain leads there (ParseListing's More).
func (lightnovelworld) ListingTarget(page int) Target {
	u := "https://" + lnwHost + lnwListingPath
	if page > 1 {
		u += "?page=" + strconv.Itoa(page)
	}
	return Target{URL: u}
}

// ParseListing reads an updates page. Its anchor is an update item, or the
// page naming /updates/ as its own address; anything else is not a listing.
func (a lightnovelworld) ParseListing(body []byte) (Listing, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return Listing{}, fmt.Errorf("lightnovelworld: %w", err)
	}
	items := doc.FindMatcher(sel(lnwListingItem))
	if items.Length() == 0 && !lnwIsUpdatesPage(doc) {
		return Listing{}, fmt.Errorf("lightnovelworld: no %s and not the updates page: %w", lnwListingItem, ErrNotListing)
	}
	base := baseURL(a, Ref{})
	var rows []ListingEntry
	items.Each(func(_ int, s *goquery.Selection) {
		if e, ok := a.listingItem(base, s); ok {
			rows = append(rows, e)
		}
	})
	return Listing{Entries: listingEntries(rows), More: lnwListingMore(doc)}, nil
}

// listingItem reads one update: not a promotion, its link a LightNovelWorld
// Series address, its label a chapter number.
func (a lightnovelworld) listingItem(base *url.URL, s *goquery.Selection) (ListingEntry, bool) {
	if s.ClosestMatcher(sel(lnwListingPromo)).Length() > 0 {
		return ListingEntry{}, false
	}
	link := s
	if !s.IsMatcher(sel(lnwListingLink)) {
		link = s.FindMatcher(sel(lnwListingLink)).First()
	}
	ref, ok := listedSeries(a, base, link.AttrOr("href", ""))
	if !ok {
		return ListingEntry{}, false
	}
	l := latest{site: a}
	s.FindMatcher(sel(lnwListingLabel)).Each(func(_ int, label *goquery.Selection) {
		if num, ok := ParseChapterNumber(label.Text()); ok {
			l.offer(num, "")
		}
	})
	if l.num == "" {
		return ListingEntry{}, false
	}
	return ListingEntry{Ref: ref, Chapter: word.Chapter(l.num)}, true
}

// lnwIsUpdatesPage reports whether the page names /updates/ on the Site as its
// own address.
func lnwIsUpdatesPage(doc *goquery.Document) bool {
	found := false
	doc.FindMatcher(sel(lnwListingSelf)).EachWithBreak(func(_ int, s *goquery.Selection) bool {
		addr := s.AttrOr("href", s.AttrOr("content", ""))
		u, err := url.Parse(strings.TrimSpace(addr))
		found = err == nil && HostIn(u.Hostname(), []string{lnwHost}) && u.Path == lnwListingPath
		return !found
	})
	return found
}

// lnwListingMore is true when the page's pagination info shows rows past the
// last one on this page.
func lnwListingMore(doc *goquery.Document) bool {
	m := lnwListingExtent.FindStringSubmatch(doc.FindMatcher(sel(lnwListingInfo)).First().Text())
	if m == nil {
		return false
	}
	last, err1 := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	total, err2 := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
	return err1 == nil && err2 == nil && last < total
}
