package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/mangabookmark/mangabookmark/word"
)

// Kagane's latest-updates listing is its series search sorted by update time
// (keiyoushi's getLatestUpdates: sort option "Latest" = updated_at,desc, 35 a
// page, the page 0-based). Each row names the Series by series_id and carries
// latest_chapters, books shaped like the Series endpoint's (manga_gateway reads
// them). The reference POSTs the search with a JSON filter body
// (kaganeListingBody); the address is the one it posts to.
const (
	kaganeListingPath = "/api/v2/search/series"
	kaganeListingSize = 35
	kaganeListingSort = "updated_at,desc"
	// kaganeListingBody is the filter body the reference posts with the
	// address: every source type, English. ListingTarget carries it as the
	// Target's Body, which the fetch path sends as a POST with Content-Type
	// application/json; a GET of the address is not what the references send.
	kaganeListingBody = `{"source_type":["Official","Unofficial","Mixed"],"content_lang":["en"]}`
	kaganeListingRows = "content" // the page's rows; its absence means not a listing
	kaganeListingLast = "last"    // false while a next page exists (a Spring page)
)

// kaganeListingRow is one row of the search page. Its books are decoded one by
// one, so one malformed book does not hide the row's others.
type kaganeListingRow struct {
	SeriesID flexString        `json:"series_id"`
	Books    []json.RawMessage `json:"latest_chapters"`
}

// ListingTarget is the search address of a page (1 the newest; the Site
// counts from 0). See kaganeListingBody: the reference POSTs to it.
func (kagane) ListingTarget(page int) Target {
	page = max(page, 1)
	q := "page=" + strconv.Itoa(listingPage(page)-1) + "&size=" + strconv.Itoa(kaganeListingSize) + "&sort=" + kaganeListingSort
	return Target{URL: "https://" + kaganeHost + kaganeListingPath + "?" + q, API: true, Body: kaganeListingBody}
}

// ParseListing reads a search page: each row whose series_id is a Kagane
// Series, with the highest number among its latest_chapters read as the Series
// endpoint reads a book (kaganeNumber). A book naming another Series by its id
// is not this row's. A body without the content key is not a listing.
func (a kagane) ParseListing(body []byte) (Listing, error) {
	var page map[string]json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&page); err != nil {
		return Listing{}, fmt.Errorf("kagane: body is not the search JSON (%v): %w", shortErr(err), ErrNotListing)
	}
	raw, ok := page[kaganeListingRows]
	var rows []json.RawMessage
	if !ok || json.Unmarshal(raw, &rows) != nil || rows == nil {
		return Listing{}, fmt.Errorf("kagane: no %q array: %w", kaganeListingRows, ErrNotListing)
	}
	var out []ListingEntry
	for _, r := range rows {
		if e, ok := a.listingRow(r); ok {
			out = append(out, e)
		}
	}
	more := strings.TrimSpace(string(page[kaganeListingLast])) == "false"
	return Listing{Entries: listingEntries(out), More: more}, nil
}

// listingRow reads one row: its Series and its highest readable chapter.
func (a kagane) listingRow(raw json.RawMessage) (ListingEntry, bool) {
	var row kaganeListingRow
	if json.Unmarshal(raw, &row) != nil {
		return ListingEntry{}, false
	}
	ref, ok := a.Recognise(&url.URL{Scheme: "https", Host: kaganeHost, Path: "/series/" + string(row.SeriesID)})
	if !ok {
		return ListingEntry{}, false
	}
	l := latest{site: a}
	for _, rb := range row.Books {
		var b kaganeBook
		if json.Unmarshal(rb, &b) != nil {
			continue
		}
		if other := strings.ToLower(string(b.SeriesID)); kaganeUUID.MatchString(other) && other != ref.SeriesID {
			continue
		}
		l.offer(kaganeNumber(b), "")
	}
	if l.num == "" {
		return ListingEntry{}, false
	}
	return ListingEntry{Ref: ref, Chapter: word.Chapter(l.num)}, true
}
