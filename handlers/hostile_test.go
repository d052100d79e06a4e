package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// safeTarget is what an href, src or action on an admin page may hold: a
// path on this server, or an http(s) address elsewhere.
func safeTarget(v string) bool {
	if strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "//") && !strings.HasPrefix(v, "/\\") {
		return true
	}
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// TestAHostileSitePageNeverBecomesALinkOrAScript seeds what a hostile Site
// page could make a Poll store — markup in the title, script addresses for
// the Cover, the Series address and the latest chapter — and reads every
// admin page that shows it.
func TestAHostileSitePageNeverBecomesALinkOrAScript(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const xss = `<script>alert(1)</script><img src=x onerror=alert(2)>`
	h.seed([]fixture{
		{id: "js", title: xss, url: "javascript:alert(3)", cover: "javascript:alert(4)", chapter: "5", checkedAgo: 1},
		{id: "js-upper", title: "T", url: " JaVaScRiPt:alert(5)", cover: "JAVASCRIPT:alert(6)", checkedAgo: 1},
		{id: "data", title: "T", url: "data:text/html,<script>alert(7)</script>", cover: "data:image/svg+xml,<svg onload=alert(8)>"},
		{id: "relative", title: "T", url: "//evil.example/x", cover: "//evil.example/c.png"},
		{id: "plain-http-cover", title: "T", url: "https://asuracomic.net/series/ok", cover: "http://insecure.example/c.png"},
	})
	h.exec(`UPDATE series SET latest_chapter_url = 'javascript:alert(9)'`)
	h.exec(`UPDATE readers SET name = $1`, xss)
	h.exec(`UPDATE series SET latest_raised_by = 'r1' WHERE series_id = 'js'`)
	c := h.owner()
	pages := []string{"/admin", "/admin/series", "/admin/lanes"}
	for _, id := range []string{"js", "js-upper", "data", "relative", "plain-http-cover"} {
		pages = append(pages, "/admin/series/asurascans/"+id)
	}
	for _, p := range pages {
		for _, htmx := range []bool{false, true} {
			var hdr []string
			if htmx {
				hdr = []string{"HX-Request", "true"}
			}
			a := h.get(c, p, hdr...)
			if a.status != http.StatusOK {
				t.Errorf("%s: status %d", p, a.status)
				continue
			}
			if a.find("script:not([src])").Length() > 0 || strings.Contains(a.body, "<script>alert") || strings.Contains(a.body, "<img src=x") {
				t.Errorf("%s: page text became markup", p)
			}
			a.find("[href], [src], [action], [hx-get], [hx-post]").Each(func(_ int, s *goquery.Selection) {
				for _, attr := range []string{"href", "src", "action", "hx-get", "hx-post"} {
					if v, ok := s.Attr(attr); ok && !safeTarget(v) {
						t.Errorf("%s: %s=%q on <%s>", p, attr, v, goquery.NodeName(s))
					}
				}
				if v, ok := s.Attr("src"); ok && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "https://") {
					t.Errorf("%s: an image from a non-https address %q", p, v)
				}
			})
			a.find("*").Each(func(_ int, s *goquery.Selection) {
				for _, at := range s.Nodes[0].Attr {
					if strings.HasPrefix(strings.ToLower(at.Key), "on") {
						t.Errorf("%s: an event handler attribute %s", p, at.Key)
					}
				}
			})
		}
	}
	// The stored text is still shown, as text.
	a := h.get(c, "/admin/series/asurascans/js")
	if !strings.Contains(a.find("h1").Text(), "<script>") {
		t.Errorf("the title is not shown as text: %q", a.find("h1").Text())
	}
	if !strings.Contains(a.testid("series-detail").Text(), "javascript:alert(3)") {
		t.Errorf("the stored address is hidden rather than shown as text")
	}
}

// TestASeriesIDThatNeedsEscapingOpensAndTakesControls follows the list's
// own link to a Series whose id holds characters a path segment escapes.
func TestASeriesIDThatNeedsEscapingOpensAndTakesControls(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ids := []string{"a;b,c", "100%", "ünïcode ö", "x?y#z"}
	var fs []fixture
	for _, id := range ids {
		fs = append(fs, fixture{id: id, url: addr, chapter: "3", checkedAgo: 1})
	}
	h.seed(fs)
	c := h.owner()
	list := h.get(c, "/admin/series")
	for _, id := range ids {
		href := rowOf(list, id).Find("a.title").AttrOr("href", "")
		if href == "" {
			t.Errorf("%q: no row link", id)
			continue
		}
		a := h.get(c, href)
		if a.status != http.StatusOK || a.testid("series-detail").AttrOr("data-series-id", "") != id {
			t.Errorf("%q: %s answered %d", id, href, a.status)
			continue
		}
		action := a.testid("correction-control").AttrOr("action", "")
		if r := h.post(c, action, url.Values{"num": {"4"}}); r.status != http.StatusSeeOther || r.header.Get("Location") != href {
			t.Errorf("%q: correcting through %s answered %d to %q", id, action, r.status, r.header.Get("Location"))
		}
		if r := h.get(c, href); r.testid("correction-control").Find(`input[name="num"]`).AttrOr("value", "") != "4" {
			t.Errorf("%q: the correction did not land", id)
		}
	}
}
