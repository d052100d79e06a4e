package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/word"
)

// Comix's latest-updates listing is its browse page ordered by chapter
// update, read as keiyoushi's getLatestUpdates falls back to it when the
// signed API refuses: the react-query cache in script#initial-data, whose
// first query holding {result: {items: [...]}} is the list. The same payload
// served bare (the /api/v1/manga body a browser captures) reads the same. A
// row names its Series by url (else hid) and its newest chapter by
// latestChapter (Aidoku; latest_chapter in the older API); the next page
// exists while meta.page < meta.lastPage (keiyoushi's hasNextPage; Aidoku
// also reads pagination and last_page).
const (
	comixListingURL        = "https://" + comixHost + "/browse?order%%5Bchapter_updated_at%%5D=desc&page=%d"
	comixKeyResult         = "result"
	comixKeyItems          = "items"
	comixKeyURL            = "url"
	comixKeyEncrypted      = "e"
	comixListingSeriesAt   = "/title/"
	comixKeyPage           = "page"
	comixKeyHasNext        = "hasNext"
	comixKeyPagingMeta     = "meta"
	comixKeyPagingFallback = "pagination"
)

// comixListedChapterKeys are the keys a row's newest chapter number has gone by.
var comixListedChapterKeys = []string{"latestChapter", "latest_chapter"}

// comixLastPageKeys are the spellings of the last page's number.
var comixLastPageKeys = []string{"lastPage", "last_page"}

// ListingTarget is the page-th page of the browse list ordered by chapter
// update, read on the browser route as the Series pages are.
func (comix) ListingTarget(page int) Target {
	return Target{URL: fmt.Sprintf(comixListingURL, listingPage(page))}
}

// ListingReadySelector is what the browser route waits for on the browse
// page: the initial-data script ParseListing anchors on (the Series page's
// chapter list is not there).
func (comix) ListingReadySelector() string { return comixInitialData }

// ParseListing reads the browse page (or the bare API body). The anchor is a
// result holding an items array: a page without one (a challenge, a Series
// page, an encrypted body only a browser can read) is not the listing.
func (a comix) ParseListing(body []byte) (Listing, error) {
	result, err := comixListingResult(body)
	if err != nil {
		return Listing{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(result[comixKeyItems]))
	dec.UseNumber() // a chapter number is read from its literal (canonicalFloat)
	var items []any
	_ = dec.Decode(&items) // an array: comixListingResult checked
	base := baseURL(a, Ref{})
	var entries []ListingEntry
	for _, it := range items {
		row, ok := it.(map[string]any)
		if !ok {
			continue
		}
		href := jsonString(row[comixKeyURL])
		if strings.TrimSpace(href) == "" && jsonString(row[comixKeyHID]) != "" {
			href = comixListingSeriesAt + jsonString(row[comixKeyHID])
		}
		ref, ok := listedSeries(a, base, href)
		if !ok {
			continue
		}
		l := latest{site: a}
		for _, k := range comixListedChapterKeys {
			if num, ok := jsonChapterNumber(row[k]); ok {
				l.offer(num, "")
			}
		}
		if l.num != "" {
			entries = append(entries, ListingEntry{Ref: ref, Chapter: word.Chapter(l.num)})
		}
	}
	return Listing{Entries: listingEntries(entries), More: comixMore(result)}, nil
}

// comixListingResult finds the listing's result object: the body's own when
// it is the API's JSON, else the first query of the page's initial-data (in
// the page's order) that holds one.
func comixListingResult(body []byte) (map[string]json.RawMessage, error) {
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '{' {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &top); err != nil {
			return nil, fmt.Errorf("comix: listing is not JSON: %w", ErrNotListing)
		}
		if r, ok := comixItemsResult(top); ok {
			return r, nil
		}
		if _, enc := top[comixKeyEncrypted]; enc {
			return nil, fmt.Errorf("comix: encrypted listing body, needs the browser route: %w", ErrNotListing)
		}
		return nil, fmt.Errorf("comix: no %s.%s: %w", comixKeyResult, comixKeyItems, ErrNotListing)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("comix: %w", err)
	}
	var top map[string]json.RawMessage
	raw := strings.TrimSpace(doc.FindMatcher(sel(comixInitialData)).First().Text())
	if json.Unmarshal([]byte(raw), &top) == nil {
		for _, q := range comixMembers(top[comixKeyQueries]) {
			var v map[string]json.RawMessage
			if json.Unmarshal(q, &v) != nil {
				continue
			}
			if r, ok := comixItemsResult(v); ok {
				return r, nil
			}
		}
	}
	return nil, fmt.Errorf("comix: no %s query holding %s.%s: %w", comixInitialData, comixKeyResult, comixKeyItems, ErrNotListing)
}

// comixItemsResult is v's result when it holds an items array.
func comixItemsResult(v map[string]json.RawMessage) (map[string]json.RawMessage, bool) {
	var r map[string]json.RawMessage
	if json.Unmarshal(v[comixKeyResult], &r) != nil {
		return nil, false
	}
	var items []json.RawMessage
	if json.Unmarshal(r[comixKeyItems], &items) != nil || items == nil {
		return nil, false
	}
	return r, true
}

// comixMembers is the values of a JSON object in the order the text writes
// them (a Go map would lose it); nil for anything that is not an object.
func comixMembers(raw json.RawMessage) []json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []json.RawMessage
	for dec.More() {
		if _, err := dec.Token(); err != nil { // the key
			return out
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out
		}
		out = append(out, v)
	}
	return out
}

// comixMore says whether a next page exists: page below the last page in
// meta (else pagination), else the hasNext flag.
func comixMore(result map[string]json.RawMessage) bool {
	for _, key := range []string{comixKeyPagingMeta, comixKeyPagingFallback} {
		dec := json.NewDecoder(bytes.NewReader(result[key]))
		dec.UseNumber()
		var m map[string]any
		if dec.Decode(&m) != nil {
			continue
		}
		page, okPage := comixFloat(m[comixKeyPage])
		for _, k := range comixLastPageKeys {
			if last, ok := comixFloat(m[k]); ok && okPage {
				return page < last
			}
		}
		if v, ok := m[comixKeyHasNext].(bool); ok {
			return v
		}
	}
	return false
}

// comixFloat reads a JSON number (decoded with UseNumber).
func comixFloat(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}
