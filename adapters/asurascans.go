package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/word"
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
	asuraKeyRowSlug    = "series_slug"
	asuraKeySeriesSlug = "seriesSlug"
	asuraKeyBareSlug   = "slug"
	asuraKeyLocked     = "is_locked"
	asuraKeyPremium    = "is_premium"
	asuraStatusDone    = "completed" // CONTEXT.md, Rules: Completion hint value: dropped is editorial, only completed counts
	asuraTitleFallback = "article h1, h1"
	asuraOGImage       = `meta[property="og:image"]`
	asuraChapterLinks  = `a[href*="/chapter/"]`
)

// asuraChapterPath reads the slug and number of a chapter address's whole path,
// /comics/<slug>[-<8 hex>]/chapter/<n>.
var asuraChapterPath = regexp.MustCompile(`(?i)^/comics/([a-z0-9-]+?)(?:-[0-9a-f]{8})?/chapter/(\d+(?:\.\d+)?)/?$`)

// asuraSuffix is the random part Asura appends to a slug and rotates; the bare slug
// is the stable identity.
var asuraSuffix = regexp.MustCompile(`-[0-9a-f]{8}$`)

// asuraWordPress is the WordPress-era path segment "<digits>-<slug>".
var asuraWordPress = regexp.MustCompile(`^\d+-(.+)$`)

var asuraSlug = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,199}$`)

type asurascans struct{}

func (asurascans) Site() string      { return "asurascans" }
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
	islands := asuraIslands(doc)
	slug := ref.SeriesID
	if slug == "" {
		slug = asuraPageSlug(islands)
	}
	details, hasChapters := asuraDetails(islands, slug), false
	for _, is := range islands {
		hasChapters = hasChapters || is.chapters != nil
	}
	if details == nil && !hasChapters {
		return Facts{}, fmt.Errorf("asurascans: no astro-island props: %w", ErrNotSeries)
	}
	base := baseURL(a, ref)
	f := Facts{Kind: word.Asurascans.Kind()}
	if details != nil {
		f.Title = cleanTitle(jsonString(details[asuraKeyTitle]))
		f.CoverURL = cleanURL(base, jsonString(details[asuraKeyCover]))
		f.Completed = strings.EqualFold(strings.TrimSpace(jsonString(details[asuraKeyStatus])), asuraStatusDone)
	}
	if f.Title == "" {
		f.Title = cleanTitle(doc.FindMatcher(sel(asuraTitleFallback)).First().Text())
	}
	if f.CoverURL == "" {
		f.CoverURL = cleanURL(base, doc.FindMatcher(sel(asuraOGImage)).AttrOr("content", ""))
	}
	l := latest{site: a}
	if hasChapters {
		asuraIslandChapters(&l, base, islands, slug)
	} else if slug != "" {
		asuraLinkChapters(&l, base, doc, slug)
	}
	l.into(&f)
	return f, nil
}

// astroIsland is one <astro-island>'s unwrapped props.
type astroIsland struct {
	props    map[string]any
	chapters []any // the top-level chapter list, nil when it has none
	list     bool  // the chapter-list component itself
	slug     string
}

// asuraIslands reads every island of the page, wherever it sits: the public
// parsers select islands by what their props carry, not by their place.
func asuraIslands(doc *goquery.Document) []astroIsland {
	var out []astroIsland
	doc.FindMatcher(sel(asuraIsland)).Each(func(_ int, s *goquery.Selection) {
		props, ok := astroProps(s.AttrOr("props", ""))
		if !ok {
			return
		}
		is := astroIsland{props: props, list: s.IsMatcher(sel(asuraChapterIsland)), slug: asuraSlugOf(props)}
		if list, ok := props[asuraKeyChapters].([]any); ok {
			is.chapters = list // never nil: a decoded JSON array, even an empty one
		}
		out = append(out, is)
	})
	return out
}

// asuraSlugOf is the Series slug an island names itself by, "" when none.
func asuraSlugOf(props map[string]any) string {
	for _, k := range []string{asuraKeySeriesSlug, asuraKeyRowSlug, asuraKeyBareSlug} {
		if s := strings.TrimSpace(jsonString(props[k])); s != "" {
			return asuraSuffix.ReplaceAllString(strings.ToLower(s), "")
		}
	}
	return ""
}

// asuraPageSlug is the slug the page names for itself (the parse tool without
// an address): the chapter-list island's, else the first island that names one.
func asuraPageSlug(islands []astroIsland) string {
	for _, is := range islands {
		if is.list && asuraSlug.MatchString(is.slug) {
			return is.slug
		}
	}
	for _, is := range islands {
		if asuraSlug.MatchString(is.slug) {
			return is.slug
		}
	}
	return ""
}

// asuraDetails is the first island carrying a title and a description (the
// public parsers' [props*=title][props*=description]) that does not name
// another Series.
func asuraDetails(islands []astroIsland, slug string) map[string]any {
	for _, is := range islands {
		_, hasTitle := is.props[asuraKeyTitle]
		_, hasDesc := is.props[asuraKeyDesc]
		if hasTitle && hasDesc && (is.slug == "" || slug == "" || is.slug == slug) {
			return is.props
		}
	}
	return nil
}

// asuraIslandChapters offers the Series' own chapters from every island that
// carries a chapter list. A row names its Series (series_slug, else its
// island's slug): a row naming another Series never counts; a row naming none
// counts only from the chapter-list component (or, without one, the first list).
func asuraIslandChapters(l *latest, base *url.URL, islands []astroIsland, slug string) {
	hasList := slices.ContainsFunc(islands, func(is astroIsland) bool { return is.list && is.chapters != nil })
	first := true
	for _, is := range islands {
		if is.chapters == nil {
			continue
		}
		preferred := is.list || (!hasList && first)
		first = false
		for _, item := range is.chapters {
			ch, ok := item.(map[string]any)
			if !ok {
				continue
			}
			rowSlug := strings.ToLower(strings.TrimSpace(jsonString(ch[asuraKeyRowSlug])))
			if rowSlug == "" {
				rowSlug = is.slug
			}
			own := (rowSlug == "" || slug == "") && preferred || rowSlug != "" && rowSlug == slug
			// A locked (premium, early-access) chapter is not yet readable.
			if !own || jsonBool(ch[asuraKeyLocked]) || jsonBool(ch[asuraKeyPremium]) {
				continue
			}
			num, ok := jsonChapterNumber(ch[asuraKeyNumber])
			if !ok || !l.wins(num) {
				continue // its address is built only for a chapter that would be kept
			}
			u := ""
			if asuraSlug.MatchString(slug) {
				u = cleanURL(base, "/comics/"+slug+"/chapter/"+num)
			}
			l.offer(num, u)
		}
	}
}

// asuraLinkChapters reads the chapter rows of the HTML when no island carries
// a chapter list (the Go downloader's a[data-astro-prefetch][href*="/chapter/"]):
// only links whose whole path is a chapter address of this Series count.
func asuraLinkChapters(l *latest, base *url.URL, doc *goquery.Document, slug string) {
	doc.FindMatcher(sel(asuraChapterLinks)).Each(func(_ int, s *goquery.Selection) {
		abs, _, m := matchLink(base, s.AttrOr("href", ""), asuraChapterPath)
		if m == nil || strings.ToLower(m[1]) != slug {
			return
		}
		if num, ok := chapterNumber(m[2]); ok {
			l.offer(num, abs)
		}
	})
}

// astroProps decodes an Astro island's props (already HTML-unescaped once by the
// parser) and unwraps every [typeTag, value] pair.
func astroProps(raw string) (map[string]any, bool) {
	if raw == "" || len(raw) > 8<<20 {
		return nil, false
	}
	// Numbers decode as float64: Astro's type tags are small integers, and a
	// chapter number is read with four decimals (jsonChapterNumber).
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
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
	// The decoded value is this function's own, so it is unwrapped in place.
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			t[k] = unwrapAstro(val, depth+1)
		}
		return t
	case []any:
		if len(t) == 2 {
			if _, isTag := t[0].(float64); isTag {
				return unwrapAstro(t[1], depth+1)
			}
		}
		for i, val := range t {
			t[i] = unwrapAstro(val, depth+1)
		}
		return t
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
	case float64:
		return t == 1
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
		return canonicalFloat(strings.TrimRight(strings.TrimRight(strconv.FormatFloat(t, 'f', 4, 64), "0"), "."))
	case string:
		return ParseChapterNumber(t)
	}
	return "", false
}
