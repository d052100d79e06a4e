package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/word"
)

// LightNovelWorld (lightnovelworld.org) describes the Series in a JSON-LD Book in
// the head and lists recent chapters as cards on the page.
const (
	lnwHost          = "lightnovelworld.org"
	lnwJSONLD        = `script[type="application/ld+json"]`
	lnwTypeBook      = "Book"
	lnwCompleted     = "CompletedActionStatus" // CONTEXT.md, Rules: Completion hint value: the creative-work status is the completed action status
	lnwTitleHTML     = "h1.novel-title"
	lnwOGTitle       = `meta[property="og:title"]`
	lnwOGImage       = `meta[property="og:image"]`
	lnwChapterLinks  = `a[href*="/chapter/"]`
	lnwChapterCards  = "div.chapter-card[onclick]"
	lnwNovelHeader   = "article#novel, .novel-header, " + lnwTitleHTML
	lnwSchemaPrefix1 = "https://schema.org/"
	lnwSchemaPrefix2 = "http://schema.org/"
)

// lnwChapterPath reads the slug and number of a chapter address's whole path,
// /novel/<slug>/chapter/<n>/; the site's own titles repeat and drift from the
// number, so the address is the only number trusted.
var lnwChapterPath = regexp.MustCompile(`^/novel/([A-Za-z0-9-]+)/chapter/(\d+(?:\.\d+)?)/?$`)

// lnwOnclickTarget is the quoted address a chapter card's onclick navigates to
// (location.href='/novel/<slug>/chapter/<n>/').
var lnwOnclickTarget = regexp.MustCompile(`['"]([^'"]+)['"]`)

// lnwOGCount reads "<Title> by <Author> - <N> Chapters".
var lnwOGCount = regexp.MustCompile(`(?i)-\s*(\d{1,7})\s+chapters?\s*$`)

var lnwSlug = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,200}$`)

// lnwOldID is the numeric id the old NovelPub-template site appended to slugs
// (/novel/shadow-slave-1365).
var lnwOldID = regexp.MustCompile(`-\d{3,}$`)

type lightnovelworld struct{}

func (lightnovelworld) Site() string      { return "lightnovelworld" }
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
	if !HostIn(u.Hostname(), a.Domains()) {
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
	book := a.lnwBook(doc, ref)
	if book == nil && doc.FindMatcher(sel(lnwNovelHeader)).Length() == 0 {
		return Facts{}, fmt.Errorf("lightnovelworld: no JSON-LD Book and no novel header: %w", ErrNotSeries)
	}
	base := baseURL(a, ref)
	f := Facts{Kind: word.Lightnovelworld.Kind()}
	if book != nil {
		f.Title = cleanRawTitle(jsonString(book["name"]))
		f.CoverURL = cleanURL(base, lnwImage(book["image"]))
		f.Completed = lnwIsCompleted(book["creativeWorkStatus"]) || lnwIsCompleted(book["status"])
	}
	if f.Title == "" {
		f.Title = cleanTitle(doc.FindMatcher(sel(lnwTitleHTML)).First().Text())
	}
	if f.CoverURL == "" {
		f.CoverURL = cleanURL(base, doc.FindMatcher(sel(lnwOGImage)).AttrOr("content", ""))
	}
	l := latest{site: a}
	offer := func(link string) {
		if num, u, ok := lnwChapter(base, link, ref.SeriesID); ok {
			l.offer(num, u)
		}
	}
	doc.FindMatcher(sel(lnwChapterLinks)).Each(func(_ int, s *goquery.Selection) { offer(s.AttrOr("href", "")) })
	doc.FindMatcher(sel(lnwChapterCards)).Each(func(_ int, s *goquery.Selection) {
		if m := lnwOnclickTarget.FindStringSubmatch(s.AttrOr("onclick", "")); m != nil {
			offer(m[1])
		}
	})
	if l.num == "" && ref.SeriesID != "" {
		// No chapter on the page: og:title states the count, and chapter
		// addresses run 1..N, so N is the newest.
		if m := lnwOGCount.FindStringSubmatch(doc.FindMatcher(sel(lnwOGTitle)).AttrOr("content", "")); m != nil {
			if num, ok := chapterNumber(m[1]); ok && num != "0" {
				l.offer(num, cleanURL(base, "/novel/"+ref.SeriesID+"/chapter/"+num+"/"))
			}
		}
	}
	l.into(&f)
	return f, nil
}

// lnwChapter reads one chapter link: resolved against the page's address (so a
// link to another host keeps that host, and the off-site rule in latest.offer
// sees it), its whole path a chapter address of this Series (slug), the query
// and fragment dropped. slug "" accepts any Series' chapter (no address known).
func lnwChapter(base *url.URL, link, slug string) (num, abs string, ok bool) {
	_, u, m := matchLink(base, link, lnwChapterPath)
	if m == nil || (slug != "" && strings.ToLower(m[1]) != slug) {
		return "", "", false
	}
	num, ok = chapterNumber(m[2])
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	return num, u.String(), ok
}

// lnwBook finds the Series' JSON-LD object of @type Book (top level, in an
// array, or in an @graph). A page may describe other novels as Books too (a
// "related" list): a Book whose url is another Series' address is never this
// one's; one without a url is taken only when no Book names this Series.
func (a lightnovelworld) lnwBook(doc *goquery.Document, ref Ref) map[string]any {
	var books []map[string]any
	doc.FindMatcher(sel(lnwJSONLD)).Each(func(_ int, s *goquery.Selection) {
		var v any
		if json.Unmarshal([]byte(strings.TrimSpace(s.Text())), &v) == nil {
			books = findBooks(v, 0, books)
		}
	})
	var unnamed map[string]any
	for _, b := range books {
		claim := strings.TrimSpace(jsonString(b["url"]))
		if ref.SeriesID == "" {
			return b
		}
		if claim == "" {
			if unnamed == nil {
				unnamed = b
			}
			continue
		}
		if u, err := url.Parse(claim); err == nil {
			if r, ok := a.Recognise(baseURL(a, ref).ResolveReference(u)); ok && r.SeriesID == ref.SeriesID {
				return b
			}
		}
	}
	return unnamed
}

// maxBooks bounds how many JSON-LD Books one page may offer.
const maxBooks = 64

func findBooks(v any, depth int, out []map[string]any) []map[string]any {
	if depth > 4 || len(out) >= maxBooks {
		return out
	}
	switch t := v.(type) {
	case map[string]any:
		if isType(t["@type"], lnwTypeBook) {
			return append(out, t)
		}
		return findBooks(t["@graph"], depth+1, out)
	case []any:
		for _, item := range t {
			out = findBooks(item, depth+1, out)
		}
	}
	return out
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
