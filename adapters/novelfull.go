package adapters

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/word"
)

// NovelFull serves plain server-rendered pages. The Series page carries a "Latest
// chapters" box and the first page of the chapter list; together they hold the
// newest chapter without a second request. Each block is looked for where the
// public parsers look, not only at the depth one layout put it (see "Where an
// adapter may look" in doc.go); the chapters count only by their address.
const (
	novelfullHost        = "novelfull.com"
	novelfullAnchor      = ".col-info-desc, .info-holder"
	novelfullTitle       = ".col-info-desc h3.title"
	novelfullTitleWide   = ".desc h3.title, h3.title[itemprop=name]"
	novelfullCover       = ".info-holder .book img"
	novelfullCoverWide   = ".book img"
	novelfullInfoRows    = ".info-holder .info div"
	novelfullInfoWide    = ".info div"
	novelfullStatusLabel = "Status"
	novelfullDone        = "Completed"
	novelfullChapters    = "ul.l-chapters li a, #list-chapter ul.list-chapter li a, ul.list-chapter li a"
)

// novelfullChapterPath reads the slug and number of a chapter address's whole
// path, /<slug>/chapter-<n>[-<title>].html.
var novelfullChapterPath = regexp.MustCompile(`^/([A-Za-z0-9-]+)/chapter-(\d+(?:\.\d+)?)(?:[-.][^/]*)?$`)

var novelfullSlug = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,200}$`)

// novelfullPages are one-segment .html pages that are not Series.
var novelfullPages = map[string]bool{"index": true, "search": true, "contact": true, "privacy-policy": true, "terms-of-service": true}

type novelfull struct{}

func (novelfull) Site() string      { return "novelfull" }
func (novelfull) Domains() []string { return []string{novelfullHost, "novelfull.net"} }

// Recognise accepts /<slug>.html and the chapter pages /<slug>/chapter-<n>-<title>.html.
func (a novelfull) Recognise(u *url.URL) (Ref, bool) {
	if !recogniseCommon(a, u) {
		return Ref{}, false
	}
	seg := pathSegments(u)
	var slug string
	switch {
	case len(seg) == 1 && strings.HasSuffix(seg[0], ".html"):
		slug = strings.TrimSuffix(seg[0], ".html")
	case len(seg) == 2 && strings.HasPrefix(seg[1], "chapter-") && strings.HasSuffix(seg[1], ".html"):
		slug = seg[0]
	default:
		return Ref{}, false
	}
	slug = strings.ToLower(slug)
	if !novelfullSlug.MatchString(slug) || novelfullPages[slug] {
		return Ref{}, false
	}
	return Ref{Site: a.Site(), SeriesID: slug, URL: "https://" + novelfullHost + "/" + slug + ".html"}, true
}

func (novelfull) Target(ref Ref) Target { return Target{URL: ref.URL} }

func (a novelfull) Parse(body []byte, ref Ref) (Facts, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return Facts{}, fmt.Errorf("novelfull: %w", err)
	}
	if doc.FindMatcher(sel(novelfullAnchor)).Length() == 0 {
		return Facts{}, fmt.Errorf("novelfull: no %s: %w", novelfullAnchor, ErrNotSeries)
	}
	base := baseURL(a, ref)
	f := Facts{Kind: word.Novelfull.Kind()}
	f.Title = cleanTitle(firstOf(doc, novelfullTitle, novelfullTitleWide).Text())
	img := firstOf(doc, novelfullCover, novelfullCoverWide)
	if f.Title == "" {
		f.Title = cleanTitle(img.AttrOr("alt", ""))
	}
	cover := img.AttrOr("data-src", "")
	if cover == "" {
		cover = img.AttrOr("src", "")
	}
	f.CoverURL = cleanURL(base, cover)
	// A field row is a div whose own heading names it; the field order varies, so
	// the label decides, never the index.
	rows := doc.FindMatcher(sel(novelfullInfoRows))
	if rows.Length() == 0 {
		rows = doc.FindMatcher(sel(novelfullInfoWide))
	}
	rows.EachWithBreak(func(_ int, row *goquery.Selection) bool {
		label := row.ChildrenMatcher(sel("h3")).First()
		if !strings.HasPrefix(strings.TrimSpace(label.Text()), novelfullStatusLabel) {
			return true
		}
		f.Completed = strings.EqualFold(strings.TrimSpace(row.FindMatcher(sel("a")).First().Text()), novelfullDone)
		return false
	})
	l := latest{site: a}
	doc.FindMatcher(sel(novelfullChapters)).Each(func(_ int, s *goquery.Selection) {
		if num, u, ok := novelfullChapter(base, s, ref.SeriesID); ok {
			l.offer(num, u)
		}
	})
	l.into(&f)
	return f, nil
}

// novelfullChapter reads one chapter link. Only this Series' own chapters
// count: the link's whole path is /<slug>/chapter-<n>....html with the Series'
// slug (slug "" accepts any). The number is the label's ("Chapter 12.5: ..."),
// else the address's.
func novelfullChapter(base *url.URL, s *goquery.Selection, slug string) (num, abs string, ok bool) {
	abs, _, m := matchLink(base, s.AttrOr("href", ""), novelfullChapterPath)
	if m == nil || (slug != "" && strings.ToLower(m[1]) != slug) {
		return "", "", false
	}
	label := s.AttrOr("title", "")
	if label == "" {
		label = s.Text()
	}
	if num, ok = ParseChapterNumber(label); !ok {
		num, ok = chapterNumber(m[2])
	}
	return num, abs, ok
}

// firstOf is the first element matching the preferred selector, else the
// first matching the wider one.
func firstOf(doc *goquery.Document, preferred, wider string) *goquery.Selection {
	if s := doc.FindMatcher(sel(preferred)).First(); s.Length() > 0 {
		return s
	}
	return doc.FindMatcher(sel(wider)).First()
}
