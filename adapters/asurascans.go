package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// Asura Scans serves an Astro site: the Series' data sits in the HTML-escaped JSON
// `props` attribute of <astro-island> elements, every value wrapped as
// [typeTag, value].
const (
	asuraHost          = "asurascans.com"
	asuraIsland        = "astro-island[props]"
	asuraChapterIsland = `astro-island[component-url*="ChapterList"]`
	asuraKeyTitle      = "title"
	asuraKeyDesc       = "description"
	asuraKeyCover      = "coverUrl"
	asuraKeyStatus     = "status"
	asuraKeyChapters   = "chapters"
	asuraKeyNumber     = "number"
	asuraKeySlug       = "series_slug"
	asuraKeySeriesSlug = "seriesSlug"
	asuraKeyLocked     = "is_locked"
	asuraKeyPremium    = "is_premium"
	asuraStatusDone    = "completed" // seed 001: dropped is editorial, only completed counts
	asuraTitleFallback = "article h1, h1"
	asuraOGImage       = `meta[property="og:image"]`
)

// asuraSuffix is the random part Asura appends to a slug and rotates; the bare slug
// is the stable identity.
var asuraSuffix = regexp.MustCompile(`-[0-9a-f]{8}$`)

// asuraWordPress is the WordPress-era path segment "<digits>-<slug>".
var asuraWordPress = regexp.MustCompile(`^\d+-(.+)$`)

var asuraSlug = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,199}$`)

type asurascans struct{}

func (asurascans) Site() string      { return "asurascans" }
func (asurascans) Kind() string      { return KindManga }
func (asurascans) Domains() []string { return []string{asuraHost} }
func (asurascans) legacyDomains() []string {
	return []string{"asuracomic.net", "asuratoon.com", "asurascans.net"}
}

// Recognise accepts /comics/<slug>[-<8 hex>] (current), /series/<slug>-<hex>
// (asuracomic.net era) and /manga/<digits>-<slug>/ (WordPress era), and the
// chapter pages under the first two.
func (a asurascans) Recognise(u *url.URL) (Ref, bool) {
	if !recogniseCommon(a, u) {
		return Ref{}, false
	}
	seg := pathSegments(u)
	if len(seg) < 2 {
		return Ref{}, false
	}
	var slug string
	switch seg[0] {
	case "comics", "series":
		if len(seg) != 2 && !(len(seg) >= 4 && seg[2] == "chapter") {
			return Ref{}, false
		}
		slug = asuraSuffix.ReplaceAllString(strings.ToLower(seg[1]), "")
	case "manga":
		if len(seg) != 2 {
			return Ref{}, false
		}
		m := asuraWordPress.FindStringSubmatch(strings.ToLower(seg[1]))
		if m == nil {
			return Ref{}, false
		}
		slug = m[1]
	default:
		return Ref{}, false
	}
	if !asuraSlug.MatchString(slug) {
		return Ref{}, false
	}
	// The unsuffixed address redirects to the current suffixed one, so it stays
	// valid when the suffix rotates.
	return Ref{Site: a.Site(), SeriesID: slug, URL: "https://" + asuraHost + "/comics/" + slug}, true
}

func (asurascans) Target(ref Ref) Target { return Target{URL: ref.URL} }

func (a asurascans) Parse(body []byte, ref Ref) (Facts, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return Facts{}, fmt.Errorf("asurascans: %w", err)
	}
	f := Facts{Kind: KindManga}
	var details, chapters map[string]any
	doc.Find(asuraIsland).Each(func(_ int, s *goquery.Selection) {
		props, ok := astroProps(s.AttrOr("props", ""))
		if !ok {
			return
		}
		if _, has := props[asuraKeyChapters]; has {
			// Prefer the chapter-list component; any other island carrying
			// chapters is a fallback.
			if chapters == nil || s.Is(asuraChapterIsland) {
				chapters = props
			}
		}
		_, hasTitle := props[asuraKeyTitle]
		_, hasDesc := props[asuraKeyDesc]
		if details == nil && hasTitle && hasDesc {
			details = props
		}
	})
	if details == nil && chapters == nil {
		return Facts{}, fmt.Errorf("asurascans: no astro-island props: %w", ErrNotSeries)
	}
	base := baseURL(a, ref)
	if details != nil {
		f.Title = cleanText(jsonString(details[asuraKeyTitle]), maxTitleLen)
		f.CoverURL = cleanURL(base, jsonString(details[asuraKeyCover]))
		f.Completed = strings.EqualFold(strings.TrimSpace(jsonString(details[asuraKeyStatus])), asuraStatusDone)
	}
	if f.Title == "" {
		f.Title = cleanText(doc.Find(asuraTitleFallback).First().Text(), maxTitleLen)
	}
	if f.CoverURL == "" {
		f.CoverURL = cleanURL(base, doc.Find(asuraOGImage).AttrOr("content", ""))
	}
	// Chapter addresses hang off the Series' bare slug.
	slug := ref.SeriesID
	if slug == "" {
		slug = jsonString(chapters[asuraKeySeriesSlug])
	}
	if !asuraSlug.MatchString(slug) {
		slug = ""
	}
	l := latest{site: a}
	list, _ := chapters[asuraKeyChapters].([]any)
	for _, item := range list {
		ch, ok := item.(map[string]any)
		if !ok {
			continue
		}
		// The list is scoped to this Series: a row naming another slug belongs to
		// some other island's data.
		if s := jsonString(ch[asuraKeySlug]); s != "" && ref.SeriesID != "" && s != ref.SeriesID {
			continue
		}
		// A locked (premium, early-access) chapter is not yet readable.
		if jsonBool(ch[asuraKeyLocked]) || jsonBool(ch[asuraKeyPremium]) {
			continue
		}
		num, ok := jsonChapterNumber(ch[asuraKeyNumber])
		if !ok {
			continue
		}
		u := ""
		if slug != "" {
			u = cleanURL(base, "/comics/"+slug+"/chapter/"+num)
		}
		l.offer(num, u)
	}
	l.into(&f)
	return f, nil
}

// astroProps decodes an Astro island's props (already HTML-unescaped once by the
// parser) and unwraps every [typeTag, value] pair.
func astroProps(raw string) (map[string]any, bool) {
	if raw == "" || len(raw) > 8<<20 {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	m, ok := unwrapAstro(v, 0).(map[string]any)
	return m, ok
}

// unwrapAstro undoes Astro's prop encoding: a two-element array whose first item is
// a number tag stands for its second item; objects and other arrays are unwrapped
// member by member. Depth is bounded so hostile input cannot recurse for ever.
func unwrapAstro(v any, depth int) any {
	if depth > 64 {
		return nil
	}
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			out[k] = unwrapAstro(val, depth+1)
		}
		return out
	case []any:
		if len(t) == 2 {
			if _, isTag := t[0].(json.Number); isTag {
				return unwrapAstro(t[1], depth+1)
			}
		}
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = unwrapAstro(val, depth+1)
		}
		return out
	}
	return v
}

// jsonString returns a JSON string value, or "" for anything else.
func jsonString(v any) string {
	s, _ := v.(string)
	return s
}

// jsonBool is true for JSON true, and for the strings "true" and "1".
func jsonBool(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case string:
		return t == "true" || t == "1"
	case json.Number:
		return t.String() == "1"
	}
	return false
}

// jsonChapterNumber reads a chapter number given as a JSON number or a string.
func jsonChapterNumber(v any) (string, bool) {
	switch t := v.(type) {
	case json.Number:
		return canonicalFloat(t.String())
	case float64:
		return canonicalFloat(strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", t), "0"), "."))
	case string:
		return ParseChapterNumber(t)
	}
	return "", false
}
