package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/store/word"
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
	comixKeyStatus    = "status"
	comixKeyPoster    = "poster"
	comixDone         = "finished" // seed 001: on_hiatus, discontinued, not_yet_released are distinct
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

// comixChapterPath reads the number from /title/<hid>-<slug>/<id>-chapter-<n>.
var comixChapterPath = regexp.MustCompile(`-chapter-(\d+(?:\.\d+)?)(?:$|[/?#])`)

type comix struct{}

func (comix) Site() string          { return "comix" }
func (comix) Kind() string          { return KindManga }
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
	detail := comixDetail(doc.Find(comixInitialData).First().Text())
	rows := doc.Find(comixRows)
	if detail == nil && rows.Length() == 0 && doc.Find(comixTitleHTML).Length() == 0 {
		return Facts{}, fmt.Errorf("comix: no initial-data detail or chapter list: %w", ErrNotSeries)
	}
	base := baseURL(a, ref)
	f := Facts{Kind: KindManga}
	if detail != nil {
		f.Title = cleanRaw(jsonString(detail[comixKeyTitle]), maxTitleLen)
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
		f.Title = cleanText(doc.Find(comixTitleHTML).First().Text(), maxTitleLen)
	}
	if f.Title == "" {
		f.Title = cleanText(doc.Find(comixOGTitle).AttrOr("content", ""), maxTitleLen)
	}
	l := latest{site: a}
	rows.Each(func(_ int, row *goquery.Selection) {
		link := row.Find(comixRowLink).First()
		href := link.AttrOr("href", "")
		if href == "" {
			href = row.Find("a[href]").First().AttrOr("href", "")
		}
		// Rows of other titles (a "more like this" strip) link elsewhere.
		if ref.SeriesID != "" && href != "" && !strings.Contains(href, "/title/"+ref.SeriesID+"-") {
			return
		}
		num, _ := ParseChapterNumber(row.Find(comixRowNumber).First().Text())
		if num == "" {
			if m := comixChapterPath.FindStringSubmatch(href); m != nil {
				num, _ = word.Chapter(m[1])
			}
		}
		l.offer(num, cleanURL(base, href))
	})
	l.into(&f)
	return f, nil
}

// comixDetail finds the detail entry of the serialized react-query cache. The
// entry's key contains "detail"; its value is the Manga object, or wraps it in
// "data" (or "state"."data").
func comixDetail(raw string) map[string]any {
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
	for key, val := range queries {
		if !strings.Contains(key, comixDetailMarker) {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(val, &v); err != nil {
			continue
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
				break
			}
			v = next
		}
	}
	return nil
}
