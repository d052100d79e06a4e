package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mangabookmark/mangabookmark/word"
)

// Asura Scans' latest-updates listing is its series API sorted by latest
// update, the endpoint keiyoushi's getLatestUpdates reads (sort=latest,
// 20 a page, by offset). Each row names its Series by public_url (else slug)
// and carries its newest chapters in latest_chapters; meta.has_more says a
// next page exists.
const (
	asuraListingURL      = "https://api." + asuraHost + "/api/series?offset=%d&limit=%d&sort=latest&order=desc"
	asuraListingPerPage  = 20
	asuraKeyListingRows  = "data"
	asuraKeyPublicURL    = "public_url"
	asuraKeyLatest       = "latest_chapters"
	asuraKeyListingMeta  = "meta"
	asuraKeyListingMore  = "has_more"
	asuraListingSeriesAt = "/comics/"
)

// ListingTarget is the page-th page of the series API sorted by latest update.
func (asurascans) ListingTarget(page int) Target {
	offset := (listingPage(page) - 1) * asuraListingPerPage
	return Target{URL: fmt.Sprintf(asuraListingURL, offset, asuraListingPerPage), API: true}
}

// ParseListing reads the API body. The anchor is the data array: a body
// without one (a challenge page, an error object) is not the listing.
func (a asurascans) ParseListing(body []byte) (Listing, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimSpace(body), &top); err != nil {
		return Listing{}, fmt.Errorf("asurascans: listing is not JSON: %w", ErrNotListing)
	}
	dec := json.NewDecoder(bytes.NewReader(top[asuraKeyListingRows]))
	dec.UseNumber() // a chapter number is read from its literal (canonicalFloat)
	var rows []any
	if err := dec.Decode(&rows); err != nil || rows == nil {
		return Listing{}, fmt.Errorf("asurascans: no %s array: %w", asuraKeyListingRows, ErrNotListing)
	}
	base := baseURL(a, Ref{})
	var entries []ListingEntry
	for _, r := range rows {
		row, ok := r.(map[string]any)
		if !ok {
			continue
		}
		href := jsonString(row[asuraKeyPublicURL])
		if strings.TrimSpace(href) == "" && jsonString(row[asuraKeyBareSlug]) != "" {
			href = asuraListingSeriesAt + jsonString(row[asuraKeyBareSlug])
		}
		ref, ok := listedSeries(a, base, href)
		if !ok {
			continue
		}
		if num, ok := asuraListedChapter(a, row[asuraKeyLatest]); ok {
			entries = append(entries, ListingEntry{Ref: ref, Chapter: num})
		}
	}
	var meta map[string]any
	_ = json.Unmarshal(top[asuraKeyListingMeta], &meta)
	return Listing{Entries: listingEntries(entries), More: jsonBool(meta[asuraKeyListingMore])}, nil
}

// asuraListedChapter is the highest readable chapter of a row's
// latest_chapters, whatever their order, read as the Series page reads its
// chapter list: a locked (premium, early-access) chapter is not yet readable
// and does not count.
func asuraListedChapter(a asurascans, v any) (word.Chapter, bool) {
	list, _ := v.([]any)
	l := latest{site: a}
	for _, item := range list {
		ch, ok := item.(map[string]any)
		if !ok || jsonBool(ch[asuraKeyLocked]) || jsonBool(ch[asuraKeyPremium]) {
			continue
		}
		if num, ok := jsonChapterNumber(ch[asuraKeyNumber]); ok {
			l.offer(num, "")
		}
	}
	return word.Chapter(l.num), l.num != ""
}
