package adapters

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/store/word"
)

// NovelFull serves plain server-rendered pages. The Series page carries a "Latest
// chapters" box and the first page of the chapter list; together they hold the
// newest chapter without a second request.
const (
	novelfullHost        = "novelfull.com"
	novelfullAnchor      = ".col-info-desc"
	novelfullTitle       = "h3.title"
	novelfullCover       = ".info-holder .book img"
	novelfullInfoRows    = ".info-holder .info > div"
	novelfullStatusLabel = "Status"
	novelfullDone        = "Completed"
	novelfullLatestBox   = ".l-chapter ul.l-chapters li a"
	novelfullListRows    = "#list-chapter ul.list-chapter li a"
)

// novelfullChapterPath reads the number from /<slug>/chapter-<n>[-<title>].html.
var novelfullChapterPath = regexp.MustCompile(`/chapter-(\d+(?:\.\d+)?)(?:[-.]|$)`)

var novelfullSlug = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,200}$`)

// novelfullPages are one-segment .html pages that are not Series.
var novelfullPages = map[string]bool{"index": true, "search": true, "contact": true, "privacy-policy": true, "terms-of-service": true}

type novelfull struct{}

func (novelfull) Site() string      { return "novelfull" }
func (novelfull) Kind() string      { return KindNovel }
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
	if doc.Find(novelfullAnchor).Length() == 0 && doc.Find(".info-holder").Length() == 0 {
		return Facts{}, fmt.Errorf("novelfull: no %s: %w", novelfullAnchor, ErrNotSeries)
	}
	base := baseURL(a, ref)
	f := Facts{Kind: KindNovel}
	f.Title = cleanText(doc.Find(novelfullAnchor+" "+novelfullTitle).First().Text(), maxTitleLen)
	img := doc.Find(novelfullCover).First()
	if f.Title == "" {
		f.Title = cleanText(img.AttrOr("alt", ""), maxTitleLen)
	}
	cover := img.AttrOr("data-src", "")
	if cover == "" {
		cover = img.AttrOr("src", "")
	}
	f.CoverURL = cleanURL(base, cover)
	doc.Find(novelfullInfoRows).EachWithBreak(func(_ int, row *goquery.Selection) bool {
		if !strings.HasPrefix(strings.TrimSpace(row.Find("h3").First().Text()), novelfullStatusLabel) {
			return true
		}
		f.Completed = strings.EqualFold(strings.TrimSpace(row.Find("a").First().Text()), novelfullDone)
		return false
	})
	l := latest{site: a}
	doc.Find(novelfullLatestBox + ", " + novelfullListRows).Each(func(_ int, s *goquery.Selection) {
		href := s.AttrOr("href", "")
		if ref.SeriesID != "" && !strings.Contains(href, "/"+ref.SeriesID+"/") {
			return
		}
		label := s.AttrOr("title", "")
		if label == "" {
			label = s.Text()
		}
		num, _ := ParseChapterNumber(label)
		if num == "" {
			if m := novelfullChapterPath.FindStringSubmatch(href); m != nil {
				num, _ = word.Chapter(m[1])
			}
		}
		l.offer(num, cleanURL(base, href))
	})
	l.into(&f)
	return f, nil
}
