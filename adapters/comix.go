package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/word"
)

// Comix renders its chapter list in the browser (the API behind it is signed), so
// its Series page is read on the browser route: the detail comes from the
// react-query cache in #initial-data, the chapters from the rendered rows.
const (
	comixHost         = "comix.to"
	comixInitialData  = "script#initial-data"
	comixKeyQueries   = "queries"
	comixDetailMarker = `"detail"`
	comixKeyTitle     = "title"
	comixKeyHID       = "hid"
	comixKeyStatus    = "status"
	comixKeyPoster    = "poster"
	comixDone         = "finished" // CONTEXT.md, Rules: Completion hint value: on_hiatus, discontinued, not_yet_released are distinct
	comixRows         = ".mchap-item"
	comixRowNumber    = ".mchap-row__ch"
	comixRowLink      = "a.mchap-row__primary"
	comixTitleHTML    = "h1.mpage__title"
	comixOGTitle      = `meta[property="og:title"]`
	comixReady        = ".mchap-list .mchap-item, .mchap-empty"
)

// comixPosterSizes is the order in which poster sizes are preferred.
var comixPosterSizes = []string{"large", "medium", "small"}

// comixHID is the short hash that identifies a title: the part of
// /title/<hid>-<slug> before the first dash.
var comixHID = regexp.MustCompile(`^([a-z0-9]{4,12})(?:-([a-z0-9-]{0,200}))?$`)

// comixChapterPath reads the hid and number of a chapter address's whole path,
// /title/<hid>-<slug>/<id>-chapter-<n>.
var comixChapterPath = regexp.MustCompile(`^/title/([A-Za-z0-9]{4,12})-[^/]*/[0-9]+-chapter-(\d+(?:\.\d+)?)/?$`)

type comix struct{}

func (comix) Site() string          { return "comix" }
func (comix) Domains() []string     { return []string{comixHost, "comix.ws"} }
func (comix) ReadySelector() string { return comixReady }
func (comix) Target(ref Ref) Target { return Target{URL: ref.URL} }

// Recognise accepts /title/<hid>[-<slug>] and its chapter pages
// /title/<hid>-<slug>/<id>-chapter-<n>, on comix.to or its mirror.
func (a comix) Recognise(u *url.URL) (Ref, bool) {
	if !recogniseCommon(a, u) {
		return Ref{}, false
	}
	seg := pathSegments(u)
	if len(seg) < 2 || len(seg) > 3 || seg[0] != "title" {
		return Ref{}, false
	}
	if len(seg) == 3 && !strings.Contains(seg[2], "-chapter-") {
		return Ref{}, false
	}
	m := comixHID.FindStringSubmatch(strings.ToLower(seg[1]))
	if m == nil {
		return Ref{}, false
	}
	return Ref{Site: a.Site(), SeriesID: m[1], URL: "https://" + comixHost + "/title/" + m[0]}, true
}

func (a comix) Parse(body []byte, ref Ref) (Facts, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return Facts{}, fmt.Errorf("comix: %w", err)
	}
	detail := comixDetail(doc.FindMatcher(sel(comixInitialData)).First().Text(), ref.SeriesID)
	rows := doc.FindMatcher(sel(comixRows))
	if detail == nil && rows.Length() == 0 && doc.FindMatcher(sel(comixTitleHTML)).Length() == 0 {
		return Facts{}, fmt.Errorf("comix: no initial-data detail or chapter list: %w", ErrNotSeries)
	}
	base := baseURL(a, ref)
	f := Facts{Kind: word.Comix.Kind()}
	if detail != nil {
		f.Title = cleanRawTitle(jsonString(detail[comixKeyTitle]))
		f.Completed = strings.EqualFold(strings.TrimSpace(jsonString(detail[comixKeyStatus])), comixDone)
		if poster, ok := detail[comixKeyPoster].(map[string]any); ok {
			for _, size := range comixPosterSizes {
				if f.CoverURL = cleanURL(base, jsonString(poster[size])); f.CoverURL != "" {
					break
				}
			}
		}
	}
	if f.Title == "" {
		f.Title = cleanTitle(doc.FindMatcher(sel(comixTitleHTML)).First().Text())
	}
	if f.Title == "" {
		f.Title = cleanTitle(doc.FindMatcher(sel(comixOGTitle)).AttrOr("content", ""))
	}
	l := latest{site: a}
	rows.Each(func(_ int, row *goquery.Selection) {
		if num, u, ok := comixChapter(base, row, ref.SeriesID); ok {
			l.offer(num, u)
		}
	})
	l.into(&f)
	return f, nil
}

// comixChapter reads one rendered chapter row. Only this Series' own rows
// count: the row's link is a chapter address under /title/<hid>- (a "more like
// this" strip uses the same rows for other titles). hid "" accepts any title.
// The number is the row's own label ("Ch. 541"), else the address's.
func comixChapter(base *url.URL, row *goquery.Selection, hid string) (num, abs string, ok bool) {
	href := row.FindMatcher(sel(comixRowLink)).First().AttrOr("href", "")
	if href == "" {
		href = row.FindMatcher(sel("a[href]")).First().AttrOr("href", "")
	}
	if href == "" && row.IsMatcher(sel("a[href]")) {
		href = row.AttrOr("href", "")
	}
	abs, _, m := matchLink(base, href, comixChapterPath)
	if m == nil || (hid != "" && strings.ToLower(m[1]) != hid) {
		return "", "", false
	}
	if num, ok = ParseChapterNumber(row.FindMatcher(sel(comixRowNumber)).First().Text()); !ok {
		num, ok = chapterNumber(m[2])
	}
	return num, abs, ok
}

// comixDetail finds the detail entry of the serialized react-query cache. The
// entry's key contains "detail"; its value is the Manga object, or wraps it in
// "data" (or "state"."data"). The cache may hold other titles' details too (a
// prefetched related title): an entry whose hid is another title's is never
// this one's, and the keys are visited in sorted order so the pick is stable.
func comixDetail(raw, hid string) map[string]any {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &top); err != nil {
		return nil
	}
	var queries map[string]json.RawMessage
	if err := json.Unmarshal(top[comixKeyQueries], &queries); err != nil {
		return nil
	}
	keys := slices.Sorted(maps.Keys(queries))
	var unnamed map[string]any
	for _, key := range keys {
		if !strings.Contains(key, comixDetailMarker) {
			continue
		}
		v := comixManga(queries[key])
		if v == nil {
			continue
		}
		own := strings.ToLower(strings.TrimSpace(jsonString(v[comixKeyHID])))
		switch {
		case hid == "" || own == hid:
			return v
		case own == "" && unnamed == nil:
			unnamed = v
		}
	}
	return unnamed
}

// comixManga unwraps one detail entry to the Manga object (the one with a title).
func comixManga(val json.RawMessage) map[string]any {
	var v map[string]any
	if err := json.Unmarshal(val, &v); err != nil {
		return nil
	}
	for range 3 {
		if _, ok := v[comixKeyTitle]; ok {
			return v
		}
		next, ok := v["data"].(map[string]any)
		if !ok {
			next, ok = v["state"].(map[string]any)
		}
		if !ok {
			return nil
		}
		v = next
	}
	return nil
}
