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

// LightNovelWorld (lightnovelworld.org) describes the Series in a JSON-LD Book in
// the head and lists recent chapters as cards on the page.
const (
	lnwHost          = "lightnovelworld.org"
	lnwJSONLD        = `script[type="application/ld+json"]`
	lnwTypeBook      = "Book"
	lnwCompleted     = "CompletedActionStatus" // seed 001: the creative-work status is the completed action status
	lnwTitleHTML     = "h1.novel-title"
	lnwOGTitle       = `meta[property="og:title"]`
	lnwOGImage       = `meta[property="og:image"]`
	lnwChapterLinks  = `a[href*="/chapter/"]`
	lnwChapterCards  = "div.chapter-card[onclick]"
	lnwNovelHeader   = "article#novel, .novel-header, " + lnwTitleHTML
	lnwSchemaPrefix1 = "https://schema.org/"
	lnwSchemaPrefix2 = "http://schema.org/"
)

// lnwChapterPath reads the number from /novel/<slug>/chapter/<n>/; the site's own
// titles repeat and drift from it, so the address is the only number trusted.
var lnwChapterPath = regexp.MustCompile(`/novel/([a-z0-9-]+)/chapter/(\d+(?:\.\d+)?)/?`)

// lnwOGCount reads "<Title> by <Author> - <N> Chapters".
var lnwOGCount = regexp.MustCompile(`(?i)-\s*(\d{1,7})\s+chapters?\s*$`)

var lnwSlug = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,200}$`)

// lnwOldID is the numeric id the old NovelPub-template site appended to slugs
// (/novel/shadow-slave-1365).
var lnwOldID = regexp.MustCompile(`-\d{3,}$`)

type lightnovelworld struct{}

func (lightnovelworld) Site() string      { return "lightnovelworld" }
func (lightnovelworld) Kind() string      { return KindNovel }
func (lightnovelworld) Domains() []string { return []string{lnwHost} }
func (lightnovelworld) legacyDomains() []string {
	return []string{"lightnovelworld.com", "lightnovelworld.co"}
}

// Recognise accepts /novel/<slug>/ and everything under it (chapter pages, the
// chapter list), on lightnovelworld.org; on the old .com/.co template it drops
// the numeric id suffix those slugs carried.
func (a lightnovelworld) Recognise(u *url.URL) (Ref, bool) {
	if !recogniseCommon(a, u) {
		return Ref{}, false
	}
	seg := pathSegments(u)
	if len(seg) < 2 || len(seg) > 4 || seg[0] != "novel" {
		return Ref{}, false
	}
	slug := strings.ToLower(seg[1])
	if !hostIn(u.Hostname(), a.Domains()) {
		slug = lnwOldID.ReplaceAllString(slug, "")
	}
	if !lnwSlug.MatchString(slug) {
		return Ref{}, false
	}
	return Ref{Site: a.Site(), SeriesID: slug, URL: "https://" + lnwHost + "/novel/" + slug + "/"}, true
}

func (lightnovelworld) Target(ref Ref) Target { return Target{URL: ref.URL} }

func (a lightnovelworld) Parse(body []byte, ref Ref) (Facts, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return Facts{}, fmt.Errorf("lightnovelworld: %w", err)
	}
	book := lnwBook(doc)
	if book == nil && doc.Find(lnwNovelHeader).Length() == 0 {
		return Facts{}, fmt.Errorf("lightnovelworld: no JSON-LD Book and no novel header: %w", ErrNotSeries)
	}
	base := baseURL(a, ref)
	f := Facts{Kind: KindNovel}
	if book != nil {
		f.Title = cleanRaw(jsonString(book["name"]), maxTitleLen)
		f.CoverURL = cleanURL(base, lnwImage(book["image"]))
		f.Completed = lnwIsCompleted(book["creativeWorkStatus"]) || lnwIsCompleted(book["status"])
	}
	if f.Title == "" {
		f.Title = cleanText(doc.Find(lnwTitleHTML).First().Text(), maxTitleLen)
	}
	if f.CoverURL == "" {
		f.CoverURL = cleanURL(base, doc.Find(lnwOGImage).AttrOr("content", ""))
	}
	l := latest{site: a}
	offer := func(path string) {
		m := lnwChapterPath.FindStringSubmatch(path)
		if m == nil || (ref.SeriesID != "" && m[1] != ref.SeriesID) {
			return
		}
		num, _ := word.Chapter(m[2])
		l.offer(num, cleanURL(base, m[0]))
	}
	doc.Find(lnwChapterLinks).Each(func(_ int, s *goquery.Selection) { offer(s.AttrOr("href", "")) })
	doc.Find(lnwChapterCards).Each(func(_ int, s *goquery.Selection) { offer(s.AttrOr("onclick", "")) })
	if l.num == "" && ref.SeriesID != "" {
		// No chapter on the page: og:title states the count, and chapter
		// addresses run 1..N, so N is the newest.
		if m := lnwOGCount.FindStringSubmatch(doc.Find(lnwOGTitle).AttrOr("content", "")); m != nil {
			if num, ok := word.Chapter(m[1]); ok && num != "0" {
				l.offer(num, cleanURL(base, "/novel/"+ref.SeriesID+"/chapter/"+num+"/"))
			}
		}
	}
	l.into(&f)
	return f, nil
}

// lnwBook finds the JSON-LD object of @type Book (top level, in an array, or in an
// @graph).
func lnwBook(doc *goquery.Document) map[string]any {
	var found map[string]any
	doc.Find(lnwJSONLD).EachWithBreak(func(_ int, s *goquery.Selection) bool {
		var v any
		if json.Unmarshal([]byte(strings.TrimSpace(s.Text())), &v) != nil {
			return true
		}
		found = findBook(v, 0)
		return found == nil
	})
	return found
}

func findBook(v any, depth int) map[string]any {
	if depth > 4 {
		return nil
	}
	switch t := v.(type) {
	case map[string]any:
		if isType(t["@type"], lnwTypeBook) {
			return t
		}
		return findBook(t["@graph"], depth+1)
	case []any:
		for _, item := range t {
			if b := findBook(item, depth+1); b != nil {
				return b
			}
		}
	}
	return nil
}

func isType(v any, want string) bool {
	switch t := v.(type) {
	case string:
		return t == want
	case []any:
		for _, x := range t {
			if s, _ := x.(string); s == want {
				return true
			}
		}
	}
	return false
}

// lnwIsCompleted is true only for the completed action status, written as the
// schema.org URL or the bare name.
func lnwIsCompleted(v any) bool {
	s := strings.TrimSpace(jsonString(v))
	s = strings.TrimPrefix(strings.TrimPrefix(s, lnwSchemaPrefix1), lnwSchemaPrefix2)
	return s == lnwCompleted
}

// lnwImage reads a JSON-LD image: a URL string, an ImageObject, or a list of either.
func lnwImage(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case map[string]any:
		return jsonString(t["url"])
	case []any:
		if len(t) > 0 {
			return lnwImage(t[0])
		}
	}
	return ""
}
