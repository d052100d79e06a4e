package adapters

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// pageAddressClaims are where a page names its own address.
const (
	pageCanonical = `link[rel="canonical"]`
	pageOGURL     = `meta[property="og:url"]`
)

// bodyNamer is an adapter whose fetched body is not a page (an API body) and
// names its Series in its own way.
type bodyNamer interface {
	refFromBody(body []byte) (Ref, bool)
}

// RefFromPage finds the Series a saved page of site belongs to, from the
// addresses the page claims for itself (<link rel=canonical>, og:url, a JSON-LD
// url), the first one the Site's adapter recognises. The parse tool uses it when
// no --url is given, so chapter links stay scoped to the page's own Series.
func RefFromPage(site string, body []byte) (Ref, bool) {
	a, ok := ByName(site)
	if !ok {
		return Ref{}, false
	}
	if b, ok := a.(bodyNamer); ok {
		return b.refFromBody(body)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return Ref{}, false
	}
	var claims []string
	claims = append(claims, doc.FindMatcher(sel(pageCanonical)).AttrOr("href", ""), doc.FindMatcher(sel(pageOGURL)).AttrOr("content", ""))
	doc.FindMatcher(sel(lnwJSONLD)).Each(func(_ int, s *goquery.Selection) {
		var v map[string]any
		if json.Unmarshal([]byte(strings.TrimSpace(s.Text())), &v) == nil {
			claims = append(claims, jsonString(v["url"]))
		}
	})
	home := &url.URL{Scheme: "https", Host: a.Domains()[0], Path: "/"}
	for _, c := range claims {
		c = strings.TrimSpace(c)
		if c == "" || len(c) > maxURLLen {
			continue
		}
		u, err := url.Parse(c)
		if err != nil {
			continue
		}
		if ref, ok := a.Recognise(home.ResolveReference(u)); ok {
			return ref, true
		}
	}
	return Ref{}, false
}
