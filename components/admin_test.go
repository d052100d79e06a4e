package components_test

import (
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/word"
)

func renderDoc(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var b strings.Builder
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestAListRowCarriesItsKeysAFactLineAndALazyCoverButNoHint(t *testing.T) {
	doc := renderDoc(t, components.SeriesListRegion(components.SeriesList{
		Count: 1, Caption: "Series · failing",
		Rows: []components.SeriesRow{{
			Site: "comix", ID: "42", Title: "A Work", Cover: "https://img.example/c.jpg", Href: "/admin/series/comix/42",
			Fact: components.Fact{Site: "comix", Latest: "12.5", RaisedBy: "Ada", Checked: "checked 5 minutes ago",
				Failure: &components.FailureMarker{Outcome: "not_found", Age: "3 months"}},
		}},
	}))
	row := doc.Find(`[data-testid="series-row"]`)
	if row.AttrOr("data-site", "") != "comix" || row.AttrOr("data-series-id", "") != "42" {
		t.Fatalf("row keys: %v", row.Nodes)
	}
	if m := row.Find(`[data-testid="fact-line"] [data-testid="failure-marker"]`); !strings.Contains(m.Text(), "page gone") || !strings.Contains(m.Text(), "3 months") {
		t.Errorf("marker %q", m.Text())
	}
	img := row.Find("img")
	if img.AttrOr("loading", "") != "lazy" || img.AttrOr("width", "") != "48" || img.AttrOr("height", "") != "68" {
		t.Errorf("cover attributes: %v", img.Nodes[0].Attr)
	}
	if doc.Find(`[data-testid="completion-hint"]`).Length() != 0 {
		t.Errorf("no completion hint on a list row")
	}
}

func TestNoAdminPageUsesTheEmber(t *testing.T) {
	// CONTEXT.md, Rules: Owner colours — no ember on admin; faults use the danger token.
	v := components.Viewer{ID: "o", Name: "Owner", IsOwner: true}
	fact := components.Fact{Site: "comix", Latest: "3", Checked: "checked 1 minute ago", Failure: &components.FailureMarker{Outcome: "errors", Age: "13 hours"}}
	pages := map[string]templ.Component{
		"landing": components.AdminLanding(v, components.Landing{
			Verdict: components.Verdict{Items: []components.VerdictItem{{Kind: word.Stall, Site: "comix", Age: "13 hours", Href: "/admin/lanes"}}},
			Stats:   []components.Stat{{Filter: "failing", Label: "failing", N: 2, Href: "/admin/series?filter=failing"}},
		}),
		"list": components.AdminSeriesPage(v, components.SeriesListPage{List: components.SeriesList{
			Rows: []components.SeriesRow{{Site: "comix", ID: "1", Fact: fact}}}}),
		"detail": components.AdminDetailPage(v, components.SeriesDetail{Site: "comix", ID: "1", Base: "/admin/series/comix/1",
			Fact: fact, Unverified: true, Hint: "comix marks this work completed."}),
		"lanes": components.AdminLanesPage(v, components.LanesPage{Lanes: []components.LaneRow{{Site: "comix", State: "browser down", StateFault: true}},
			Notices: []components.Notice{{Kind: "stall", Subject: "comix", Sent: "not sent yet"}}}),
	}
	for name, c := range pages {
		doc := renderDoc(t, c)
		html, _ := doc.Html()
		if strings.Contains(strings.ToLower(html), "ember") {
			t.Errorf("%s mentions the ember", name)
		}
		if doc.Find(".fault, .failure").Length() == 0 {
			t.Errorf("%s shows its fault without the danger class", name)
		}
	}
}

func TestAFigureLinkSaysWhatItCounts(t *testing.T) {
	// Tabbing through the stats block, a screen reader reads each link's
	// name alone: "2" says nothing, "2 failing" does.
	doc := renderDoc(t, components.AdminLanding(components.Viewer{ID: "o", IsOwner: true}, components.Landing{
		Stats: []components.Stat{{Filter: "failing", Label: "failing", N: 2, Href: "/admin/series?filter=failing"},
			{Filter: "orphan", Label: "orphan", N: 1000, Capped: true, Href: "/admin/series?filter=orphan"}},
	}))
	for id, want := range map[string]string{"stat-failing": "2 failing", "stat-orphan": "1000+ orphan"} {
		if got := doc.Find(`a[data-testid="`+id+`"]`).AttrOr("aria-label", ""); got != want {
			t.Errorf("%s: link name %q, want %q", id, got, want)
		}
	}
}
