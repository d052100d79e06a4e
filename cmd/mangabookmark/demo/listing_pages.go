package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"

	"github.com/mangabookmark/mangabookmark/adapters"
)

// The listing pages each stand-in renders, one per Site, each shaped as that
// Site's listing fixtures are (adapters/testdata/listings/<site>): the same
// anchor, row markup or JSON keys, and next-page signal its ParseListing
// reads, with the stand-in's own Series in the rows.
var demoListingRenderers = map[string]func(demoListingPage) ([]byte, error){
	"asurascans":      asuraListing,
	"demonicscans":    htmlListing(demonicListingPage),
	"comix":           comixListing,
	"kagane":          kaganeListing,
	"novelfull":       htmlListing(novelfullListingPage),
	"lightnovelworld": htmlListing(lnwListingPage),
}

// status is a row's status word as the JSON listings write it.
func status(f adapters.Facts) string {
	if f.Completed {
		return "completed"
	}
	return "ongoing"
}

// asuraListing is the series API sorted by latest update: data rows with
// public_url and latest_chapters, meta.has_more.
func asuraListing(p demoListingPage) ([]byte, error) {
	type chapter struct {
		Number    json.Number `json:"number"`
		Slug      string      `json:"slug"`
		IsPremium bool        `json:"is_premium"`
	}
	type row struct {
		ID        int       `json:"id"`
		Slug      string    `json:"slug"`
		Title     string    `json:"title"`
		Cover     string    `json:"cover"`
		PublicURL string    `json:"public_url"`
		Status    string    `json:"status"`
		Latest    []chapter `json:"latest_chapters"`
	}
	data := []row{}
	for _, r := range p.Rows {
		data = append(data, row{
			ID: r.Num, Slug: r.Ref.SeriesID, Title: r.Facts.Title, Cover: r.Facts.CoverURL,
			PublicURL: href(r.Ref.URL), Status: status(r.Facts),
			Latest: []chapter{{Number: json.Number(r.Facts.LatestChapter), Slug: "chapter-" + r.Facts.LatestChapter}},
		})
	}
	meta := map[string]any{"current_page": p.Page, "per_page": p.PerPage, "total": p.Total, "has_more": p.More}
	return json.MarshalIndent(map[string]any{"data": data, "meta": meta}, "", " ")
}

// kaganeListing is the series search sorted by update time: content rows with
// series_id and latest_chapters books, and last false while a next page
// exists (a Spring page, counted from 0).
func kaganeListing(p demoListingPage) ([]byte, error) {
	type book struct {
		BookID    string      `json:"book_id"`
		Title     string      `json:"title"`
		ChapterNo json.Number `json:"chapter_no"`
	}
	type row struct {
		SeriesID string `json:"series_id"`
		Title    string `json:"title"`
		Language string `json:"translated_language"`
		Latest   []book `json:"latest_chapters"`
	}
	content := []row{}
	for _, r := range p.Rows {
		content = append(content, row{SeriesID: r.Ref.SeriesID, Title: r.Facts.Title, Language: "en", Latest: []book{{
			BookID: lastSegment(r.Facts.LatestChapterURL), Title: "Ch. " + r.Facts.LatestChapter, ChapterNo: json.Number(r.Facts.LatestChapter),
		}}})
	}
	pages := (p.Total + p.PerPage - 1) / p.PerPage
	return json.MarshalIndent(map[string]any{
		"content": content, "last": !p.More, "number": p.Page - 1, "size": p.PerPage,
		"total_pages": pages, "total_elements": p.Total,
	}, "", "  ")
}

// comixListing is the browse page ordered by chapter update: the list in the
// first query of script#initial-data, items with url and latestChapter,
// meta.page below meta.lastPage while a next page exists; the cards below
// are what a reader sees of the same list.
func comixListing(p demoListingPage) ([]byte, error) {
	type item struct {
		HID           string      `json:"hid"`
		Title         string      `json:"title"`
		URL           string      `json:"url"`
		Type          string      `json:"type"`
		Status        string      `json:"status"`
		LatestChapter json.Number `json:"latestChapter"`
		HasChapters   bool        `json:"hasChapters"`
	}
	items := []item{}
	for _, r := range p.Rows {
		st := "releasing"
		if r.Facts.Completed {
			st = "finished"
		}
		items = append(items, item{HID: r.Ref.SeriesID, Title: r.Facts.Title, URL: href(r.Ref.URL), Type: "manhwa",
			Status: st, LatestChapter: json.Number(r.Facts.LatestChapter), HasChapters: true})
	}
	last := max((p.Total+p.PerPage-1)/p.PerPage, 1)
	key := fmt.Sprintf(`["manga", "browse", {"order": {"chapter_updated_at": "desc"}, "page": %d}]`, p.Page)
	data, err := json.Marshal(map[string]any{"queries": map[string]any{key: map[string]any{
		"status": 200,
		"result": map[string]any{"items": items, "meta": map[string]any{
			"page": p.Page, "lastPage": last, "perPage": p.PerPage, "total": p.Total, "hasNext": p.More,
		}},
	}}})
	if err != nil {
		return nil, err
	}
	// json.Marshal escapes <, > and &, so the payload cannot end its script.
	return renderHTML(comixListingPage, struct {
		demoListingPage
		Data template.JS
	}{p, template.JS(data)})
}

// htmlListing renders an HTML listing page from its template.
func htmlListing(t *template.Template) func(demoListingPage) ([]byte, error) {
	return func(p demoListingPage) ([]byte, error) { return renderHTML(t, p) }
}

func renderHTML(t *template.Template, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

var listingFuncs = template.FuncMap{
	"href":    href,
	"add":     func(a, b int) int { return a + b },
	"first":   func(p demoListingPage) int { return (p.Page-1)*p.PerPage + 1 },
	"lastRow": func(p demoListingPage) int { return (p.Page-1)*p.PerPage + len(p.Rows) },
}

// demonicListingPage is lastupdates.php: .updates-element cards in
// #updates-container, each naming its Series in .updates-element-info and its
// chapter by the reader address chaptered.php?manga=&chapter=; a "Next" link
// in .pagination while a next page exists.
var demonicListingPage = template.Must(template.New("demonicscans").Funcs(listingFuncs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Latest Updates - Demonic Scans</title>
</head>
<body>
<header id="main-header"><a href="/">Demonic Scans</a>
<nav><a href="/lastupdates.php?list=1">Latest</a></nav></header>
<main class="content">
<h1 class="big-fat-titles">Latest Updates</h1>
<div id="updates-container">
{{- range .Rows}}
    <div class="updates-element">
      <div class="thumb"><a href="{{href .Ref.URL}}"><img src="{{.Facts.CoverURL}}" alt="{{.Facts.Title}}"></a></div>
      <div class="updates-element-info">
        <h2><a href="{{href .Ref.URL}}" title="{{.Facts.Title}}">{{.Facts.Title}}</a></h2>
        <div>
        <div class="flex flex-row chap-date justify-space-between">
          <div><a class="chplinks" href="chaptered.php?manga={{.Num}}&amp;chapter={{.Facts.LatestChapter}}">Chapter {{.Facts.LatestChapter}}</a></div>
        </div>
        </div>
      </div>
    </div>
{{- end}}
</div>
<div class="pagination"><ul><a href="/lastupdates.php?list={{.Page}}"><li class="active">{{.Page}}</li></a>
{{- if .More}}<a href="/lastupdates.php?list={{add .Page 1}}"><li>Next</li></a>{{end}}</ul></div>
</main>
</body>
</html>
`))

// comixListingPage is the browse page around its initial-data.
var comixListingPage = template.Must(template.New("comix").Funcs(listingFuncs).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Browse - Comix</title>
<script id="initial-data" type="application/json">{{.Data}}</script>
</head>
<body>
<main class="browse">
<h1>Latest updates</h1>
<div class="browse-grid">
{{- range .Rows}}
<div class="manga-card"><a class="manga-card__title" href="{{href .Ref.URL}}">{{.Facts.Title}}</a><span class="manga-card__chapter">Ch. {{.Facts.LatestChapter}}</span></div>
{{- end}}
</div>
<nav class="pagination"><span class="page-current">{{.Page}}</span>
{{- if .More}}<a class="page-link" rel="next" href="/browse?order%5Bchapter_updated_at%5D=desc&amp;page={{add .Page 1}}">Next</a>{{end}}</nav>
</main>
</body>
</html>
`))

// novelfullListingPage is /latest-release-novel: .row rows in the archive
// column's .list-truyen, the Series in h3.truyen-title and its chapter in
// .text-info; li.next in the pagination while a next page exists.
var novelfullListingPage = template.Must(template.New("novelfull").Funcs(listingFuncs).Parse(`<!DOCTYPE html>
<html lang="en-US">
<head>
<meta charset="UTF-8">
<title>Latest Release Novel - Novel Full</title>
</head>
<body>
<div id="wrapper">
<div class="container" id="list-page">
<div class="col-xs-12 col-sm-12 col-md-9 col-truyen-main archive">
<div class="list list-truyen col-xs-12">
<div class="title-list"><h2>Latest Release</h2></div>
{{- range .Rows}}
<div class="row" itemscope itemtype="https://schema.org/Book">
 <div class="col-xs-3"><div><img src="{{.Facts.CoverURL}}" class="cover" alt="{{.Facts.Title}}"></div></div>
 <div class="col-xs-7"><div><h3 class="truyen-title" itemprop="name"><a href="{{href .Ref.URL}}" title="{{.Facts.Title}}">{{.Facts.Title}}</a></h3></div></div>
 <div class="col-xs-2 text-info"><div><a href="{{href .Facts.LatestChapterURL}}" title="Chapter {{.Facts.LatestChapter}}"><span class="chapter-text"><span>Chapter </span></span>{{.Facts.LatestChapter}}</a></div></div>
</div>
{{- end}}
</div>
<div class="text-center"><ul class="pagination pagination-sm"><li class="active"><a href="/latest-release-novel?page={{.Page}}">{{.Page}}</a></li>
{{- if .More}}<li class="next"><a href="/latest-release-novel?page={{add .Page 1}}"><span class="glyphicon glyphicon-menu-right"></span></a></li>{{end}}</ul></div>
</div>
</div>
</div>
</body>
</html>
`))

// lnwListingPage is /updates/: a.ranking-item.chapter-item links to the
// novels, each labelled by span.chapter-link; .pagination-info states the
// rows shown and the total, which is the next-page signal; the canonical
// link names the page as the updates page even when it lists nothing.
var lnwListingPage = template.Must(template.New("lightnovelworld").Funcs(listingFuncs).Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Latest Novel Updates - Light Novel World</title><link rel="canonical" href="https://lightnovelworld.org/updates/"></head>
<body>
<main class="main-content">
<section class="updates-section">
 <h1 class="page-title">Latest Updates</h1>
 <div class="updates-list">
{{- range .Rows}}
  <a href="{{href .Ref.URL}}" class="ranking-item chapter-item"><img src="{{.Facts.CoverURL}}"><div class="ranking-item-info"><h4 class="ranking-item-title">{{.Facts.Title}}</h4><span class="chapter-link">Chapter {{.Facts.LatestChapter}}</span></div></a>
{{- end}}
 </div>
{{- if .Rows}}
 <div class="pagination-wrapper"><div class="pagination-info"><span>{{first .}}-{{lastRow .}} of {{.Total}}</span></div></div>
{{- end}}
</section>
</main>
</body>
</html>
`))

// demoHomePage is a stand-in's home page: the Site's name and its newest
// updates, each a link to its Series.
var demoHomePage = template.Must(template.New("home").Funcs(listingFuncs).Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>{{.Site}}</title></head>
<body>
<main>
<h1>{{.Site}}</h1>
<ul class="latest">
{{- range .Rows}}
<li><a href="{{href .Ref.URL}}">{{.Facts.Title}}</a> Chapter {{.Facts.LatestChapter}}</li>
{{- end}}
</ul>
</main>
</body>
</html>
`))
