package adapters

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"github.com/mangabookmark/mangabookmark/word"
)

// Demonic Scans serves plain server-rendered PHP pages. Like the public parsers,
// the details are read under the info container and the chapter list is selected
// from the whole document: where the list sits relative to the container is not
// something the Site keeps still (see "Where an adapter may look" in doc.go).
const (
	demonicHost       = "demonicscans.org"
	demonicAnchor     = "div#manga-info-container"
	demonicTitle      = "h1.big-fat-titles"
	demonicCover      = "div#manga-page img"
	demonicStats      = "div#manga-info-stats"
	demonicStatRows   = "div" // at any depth under the stats block: a row holds two li, label then value
	demonicStatusWord = "Status"
	demonicDone       = "Completed"
	demonicChapters   = "div#chapters-list a.chplinks"
)

// demonicChapterPath reads the title segment and the number of a chapter
// address's whole path, /title/<Title>/chapter/<n>[/<page>].
var demonicChapterPath = regexp.MustCompile(`^/title/([^/]+)/chapter/(\d+(?:\.\d+)?)(?:/\d*)?/?$`)

// demonicSegment is a title-derived path segment. Percent-encoding (even double
// encoding) is part of the identity, so the segment is kept exactly as served.
var demonicSegment = regexp.MustCompile(`^[A-Za-z0-9%._~!'()*,;:@+-]{1,300}$`)

type demonicscans struct{}

func (demonicscans) Site() string      { return "demonicscans" }
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
	box := doc.FindMatcher(sel(demonicAnchor)).First()
	if box.Length() == 0 {
		return Facts{}, fmt.Errorf("demonicscans: no %s: %w", demonicAnchor, ErrNotSeries)
	}
	base := baseURL(a, ref)
	f := Facts{Kind: word.Demonicscans.Kind()}
	// The ids are the page's own blocks wherever they sit; the container is
	// only preferred.
	f.Title = cleanTitle(ownText(within(box, doc, demonicTitle).First()))
	f.CoverURL = cleanURL(base, within(box, doc, demonicCover).First().AttrOr("src", ""))
	within(box, doc, demonicStats).First().FindMatcher(sel(demonicStatRows)).EachWithBreak(func(_ int, row *goquery.Selection) bool {
		items := row.ChildrenMatcher(sel("li"))
		if items.Length() < 2 || !strings.Contains(items.Eq(0).Text(), demonicStatusWord) {
			return true
		}
		f.Completed = strings.EqualFold(strings.TrimSpace(items.Eq(1).Text()), demonicDone)
		return false
	})
	l := latest{site: a}
	doc.FindMatcher(sel(demonicChapters)).Each(func(_ int, s *goquery.Selection) {
		num, u, ok := demonicChapter(base, s, ref.SeriesID)
		if ok {
			l.offer(num, u)
		}
	})
	l.into(&f)
	return f, nil
}

// demonicChapter reads one chapter link. Only this Series' own chapters count:
// the link's whole path is /title/<Title>/chapter/<n>[/<page>] and its title
// segment is the Series' (both fully decoded: the Site encodes it differently
// in a chapter link than in the Series address). id "" accepts any title.
func demonicChapter(base *url.URL, s *goquery.Selection, id string) (num, abs string, ok bool) {
	abs, _, m := matchLink(base, s.AttrOr("href", ""), demonicChapterPath)
	if m == nil || (id != "" && demonicKey(m[1]) != demonicKey(id)) {
		return "", "", false
	}
	num, ok = chapterNumber(m[2])
	if !ok {
		num, ok = ParseChapterNumber(ownText(s))
	}
	return num, abs, ok
}

// within finds selector inside the preferred block, else anywhere in the document.
func within(box *goquery.Selection, doc *goquery.Document, selector string) *goquery.Selection {
	if in := box.FindMatcher(sel(selector)); in.Length() > 0 {
		return in
	}
	return doc.FindMatcher(sel(selector))
}

// demonicKey decodes a title segment until it stops changing (the site serves
// some titles double- or triple-encoded), for comparison only.
func demonicKey(seg string) string { return unescapeFully(seg) }

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
