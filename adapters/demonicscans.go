package adapters

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"github.com/mangabookmark/mangabookmark/store/word"
)

// Demonic Scans serves plain server-rendered PHP pages; everything the Poll needs
// sits under one container.
const (
	demonicHost       = "demonicscans.org"
	demonicAnchor     = "div#manga-info-container"
	demonicTitle      = "h1.big-fat-titles"
	demonicCover      = "div#manga-page img"
	demonicStatRows   = "div#manga-info-stats > div"
	demonicStatusWord = "Status"
	demonicDone       = "Completed"
	demonicChapters   = "div#chapters-list a.chplinks"
)

// demonicChapterPath reads the number from a chapter address
// /title/<Title>/chapter/<n>/<page>.
var demonicChapterPath = regexp.MustCompile(`/chapter/(\d+(?:\.\d+)?)(?:/|$)`)

// demonicChapterTitle reads the title segment of a chapter link /title/<Title>/chapter/...
var demonicChapterTitle = regexp.MustCompile(`/title/([^/?#]+)/chapter/`)

// demonicSegment is a title-derived path segment. Percent-encoding (even double
// encoding) is part of the identity, so the segment is kept exactly as served.
var demonicSegment = regexp.MustCompile(`^[A-Za-z0-9%._~!'()*,;:@+-]{1,300}$`)

type demonicscans struct{}

func (demonicscans) Site() string      { return "demonicscans" }
func (demonicscans) Kind() string      { return KindManga }
func (demonicscans) Domains() []string { return []string{demonicHost} }

// coverDomains: Demonic Scans serves its covers from demoniclibs.com.
func (demonicscans) coverDomains() []string { return []string{"demoniclibs.com"} }

// Recognise accepts /manga/<Title> and the chapter pages /title/<Title>/chapter/<n>[/<page>].
func (a demonicscans) Recognise(u *url.URL) (Ref, bool) {
	if !recogniseCommon(a, u) {
		return Ref{}, false
	}
	seg := pathSegments(u)
	switch {
	case len(seg) == 2 && seg[0] == "manga":
	case len(seg) >= 4 && len(seg) <= 5 && seg[0] == "title" && seg[2] == "chapter":
	default:
		return Ref{}, false
	}
	id := seg[1]
	if !demonicSegment.MatchString(id) {
		return Ref{}, false
	}
	return Ref{Site: a.Site(), SeriesID: id, URL: "https://" + demonicHost + "/manga/" + id}, true
}

func (demonicscans) Target(ref Ref) Target { return Target{URL: ref.URL} }

func (a demonicscans) Parse(body []byte, ref Ref) (Facts, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return Facts{}, fmt.Errorf("demonicscans: %w", err)
	}
	box := doc.Find(demonicAnchor).First()
	if box.Length() == 0 {
		return Facts{}, fmt.Errorf("demonicscans: no %s: %w", demonicAnchor, ErrNotSeries)
	}
	base := baseURL(a, ref)
	f := Facts{Kind: KindManga}
	f.Title = cleanText(ownText(box.Find(demonicTitle).First()), maxTitleLen)
	f.CoverURL = cleanURL(base, box.Find(demonicCover).First().AttrOr("src", ""))
	box.Find(demonicStatRows).EachWithBreak(func(_ int, row *goquery.Selection) bool {
		items := row.ChildrenFiltered("li")
		if items.Length() < 2 || !strings.Contains(items.Eq(0).Text(), demonicStatusWord) {
			return true
		}
		f.Completed = strings.EqualFold(strings.TrimSpace(items.Eq(1).Text()), demonicDone)
		return false
	})
	l := latest{site: a}
	box.Find(demonicChapters).Each(func(_ int, s *goquery.Selection) {
		href := s.AttrOr("href", "")
		// Only this Series' own chapter rows count. The title segment may be
		// encoded differently in a chapter link than in the Series address, so
		// both are compared fully decoded.
		if ref.SeriesID != "" {
			m := demonicChapterTitle.FindStringSubmatch(href)
			if m == nil || demonicKey(m[1]) != demonicKey(ref.SeriesID) {
				return
			}
		}
		num := ""
		if m := demonicChapterPath.FindStringSubmatch(href); m != nil {
			num, _ = word.Chapter(m[1])
		}
		if num == "" {
			num, _ = ParseChapterNumber(ownText(s))
		}
		l.offer(num, cleanURL(base, href))
	})
	l.into(&f)
	return f, nil
}

// demonicKey decodes a title segment until it stops changing (the site serves
// some titles double- or triple-encoded), for comparison only.
func demonicKey(seg string) string {
	for range 4 {
		d, err := url.PathUnescape(seg)
		if err != nil || d == seg {
			break
		}
		seg = d
	}
	return seg
}

// ownText is the text of a node's own text children, without its elements' text
// (a chapter row's date span, a title's badge).
func ownText(s *goquery.Selection) string {
	var b strings.Builder
	for _, n := range s.Nodes {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
	}
	return b.String()
}
