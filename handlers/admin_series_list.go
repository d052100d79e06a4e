package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

var (
	filterOptions = func() []components.Option {
		var o []components.Option
		for _, f := range store.ListFilters {
			o = append(o, components.Option{Value: string(f), Label: filterWords[f].label})
		}
		return o
	}()
	siteOptions = func() []components.Option {
		o := []components.Option{{Value: "", Label: "every Site"}}
		for _, s := range word.SiteNames() {
			o = append(o, components.Option{Value: s, Label: s})
		}
		return o
	}()
	meaningOptions = func() []components.FilterMeaning {
		var o []components.FilterMeaning
		for _, f := range store.ListFilters {
			o = append(o, components.FilterMeaning{Value: string(f), Label: filterWords[f].label, Meaning: filterWords[f].meaning})
		}
		return o
	}()
	sortOptions = []components.Option{{Value: string(store.SortSite), Label: "Site and id"}, {Value: string(store.SortTitle), Label: "title"},
		{Value: string(store.SortFailing), Label: "longest failing"}, {Value: string(store.SortChecked), Label: "least recently checked"}}
	kindOptions = []components.Option{{Value: "", Label: "manga and novels"}, {Value: string(word.Manga), Label: "manga"}, {Value: string(word.Novel), Label: "novels"}}
)

// parseListQuery reads ?filter=&site=&kind=&q=&sort=&after=|before=
// strictly: an unknown word is a 400, never silently "everything".
func parseListQuery(r *http.Request) (store.SeriesQuery, string) {
	return parseListValues(r.URL.Query())
}

// maxSearch bounds the title search the owner types.
const maxSearch = 100

func parseListValues(v url.Values) (store.SeriesQuery, string) {
	f, ok := store.ParseFilter(v.Get("filter"))
	if !ok {
		return store.SeriesQuery{}, "There is no filter called " + quote(v.Get("filter")) + "."
	}
	q := store.SeriesQuery{Filter: f, Site: v.Get("site"), Kind: v.Get("kind"), Q: strings.TrimSpace(v.Get("q"))}
	if q.Site != "" && !word.KnownSite(q.Site) {
		return store.SeriesQuery{}, "There is no Site called " + quote(q.Site) + "."
	}
	if q.Kind != "" && q.Kind != string(word.Manga) && q.Kind != string(word.Novel) {
		return store.SeriesQuery{}, "A kind is manga or novel."
	}
	if len([]rune(q.Q)) > maxSearch || !utf8.ValidString(q.Q) {
		return store.SeriesQuery{}, "Search for at most 100 characters of a title."
	}
	if q.Sort, ok = store.ParseSort(v.Get("sort")); !ok {
		return store.SeriesQuery{}, "There is no order called " + quote(v.Get("sort")) + "."
	}
	cursor := v.Get("after")
	if b := v.Get("before"); b != "" {
		cursor, q.Before = b, true
	}
	if cursor != "" {
		site, id, ok := strings.Cut(cursor, ":")
		if !ok || !word.KnownSite(site) || id == "" || (q.Before && v.Get("after") != "") {
			return store.SeriesQuery{}, "That page address is not one this list made."
		}
		q.AfterSite, q.AfterID = site, id
	}
	return q, ""
}

// queryHref is the canonical address of a list page: only the parts set.
func queryHref(q store.SeriesQuery) string {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("filter", string(q.Filter))
	set("site", q.Site)
	set("kind", q.Kind)
	set("q", q.Q)
	set("sort", string(q.Sort))
	if q.AfterSite != "" || q.AfterID != "" {
		k := "after"
		if q.Before {
			k = "before"
		}
		v.Set(k, q.AfterSite+":"+q.AfterID)
	}
	if len(v) == 0 {
		return "/admin/series"
	}
	return "/admin/series?" + v.Encode()
}

// pageLinks sets the list's First, Previous and Next addresses. Going
// forward from a cursor, rows lie behind the page; going back, the cursor
// row lies ahead of it, and More means rows lie further back.
func pageLinks(l *components.SeriesList, q store.SeriesQuery, page store.AdminSeriesPage) {
	first := q
	first.AfterSite, first.AfterID, first.Before = "", "", false
	at := func(r store.AdminSeries, before bool) string {
		c := q
		c.AfterSite, c.AfterID, c.Before = r.Site, r.SeriesID, before
		return queryHref(c)
	}
	n := len(page.Rows)
	switch {
	case q.AfterSite == "": // the first page
		if page.More {
			l.NextHref = at(page.Rows[n-1], false)
		}
	case n == 0: // the cursor row is gone, or nothing follows it
		l.FirstHref = queryHref(first)
	case !q.Before:
		l.FirstHref, l.PrevHref = queryHref(first), at(page.Rows[0], true)
		if page.More {
			l.NextHref = at(page.Rows[n-1], false)
		}
	default:
		l.NextHref = at(page.Rows[n-1], false)
		if page.More {
			l.FirstHref, l.PrevHref = queryHref(first), at(page.Rows[0], true)
		}
	}
}

// quote shows a visitor's word back, cut to 40 characters (never inside
// one) and escaped by templ like any other text.
func quote(s string) string {
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return "“" + s + "”"
}

// handleAdminSeriesList is /admin/series: the full page, or for htmx only
// the list region (with the canonical address to push).
func handleAdminSeriesList(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, bad := parseListQuery(r)
		if bad != "" {
			fail(w, r, d.Logger, http.StatusBadRequest, bad)
			return
		}
		list, page, err := listPage(d, r, q)
		if err != nil {
			failStore(w, r, d.Logger, err, "The list could not be read. Try again.", "admin series: list", "filter", string(q.Filter))
			return
		}
		if wantsFragment(r) {
			// The form sends empty fields; push the canonical address.
			w.Header().Set("HX-Push-Url", queryHref(q))
			render(w, r, d.Logger, http.StatusOK, components.SeriesListRegion(list))
			return
		}
		render(w, r, d.Logger, http.StatusOK, components.AdminSeriesPage(viewerFrom(r.Context()), page))
	})
}

// listPage reads one list page and its caption count (independent: one
// round trip) and builds the list region and the whole page around it.
func listPage(d Deps, r *http.Request, q store.SeriesQuery) (components.SeriesList, components.SeriesListPage, error) {
	now := d.now()
	var page store.AdminSeriesPage
	var n int64
	b := d.Store.NewBatch()
	err := b.ListAdminSeries(q, now, &page)
	if err == nil {
		err = b.CountAdminSeries(q, now, &n)
	}
	if err == nil {
		err = d.Store.Send(r.Context(), b)
	}
	if err != nil {
		return components.SeriesList{}, components.SeriesListPage{}, err
	}
	list := components.SeriesList{Caption: caption(q), Meaning: filterWords[q.Filter].meaning, Back: queryHref(q)}
	list.Count, list.Capped = figure(n)
	for _, s := range page.Rows {
		list.Rows = append(list.Rows, components.SeriesRow{
			Site: s.Site, ID: s.SeriesID, Title: adapters.DisplayName(s.Title, s.URL, s.SeriesID), Cover: coverSrc(s.Site, s.SeriesID, s.CoverTried),
			Href: seriesHref(s.Site, s.SeriesID), Fact: factOf(s, now),
		})
	}
	pageLinks(&list, q, page)
	return list, components.SeriesListPage{
		Filter: string(q.Filter), Site: q.Site, Kind: q.Kind, Q: q.Q, Sort: string(q.Sort), Sorts: sortOptions,
		Filters: filterOptions, Meanings: meaningOptions, Sites: siteOptions, Kinds: kindOptions, List: list, Add: ownerAddBox(),
	}, nil
}

func caption(q store.SeriesQuery) string {
	c := "Series"
	if q.Filter != store.FilterAll {
		c += " · " + captionWord(q.Filter)
	}
	if q.Site != "" {
		c += " · " + q.Site
	}
	if q.Kind != "" {
		c += " · " + q.Kind
	}
	if q.Q != "" {
		c += " · titles holding " + quote(q.Q)
	}
	return c
}
