package store

import "strings"

// Sort is an order of the owner's Series list. Each is a key followed by
// the primary key, so every order is total and a keyset cursor (the key of
// one row) pages it both ways; each has its index (migration 0010).
type Sort string

// The four orders; SortSite, the empty Sort, is the list's own order.
const (
	SortSite    Sort = ""
	SortTitle   Sort = "title"   // by title, A to Z
	SortFailing Sort = "failing" // the longest run of failures first; Series without one last
	SortChecked Sort = "checked" // the least recently checked first (never checked before all)
)

// Sorts lists them in the order the list page offers them.
var Sorts = []Sort{SortSite, SortTitle, SortFailing, SortChecked}

// sortKeys is each order's key over a Series aliased as {a}. The failing
// key puts "no failure row" (failing_since NULL) after every real age, the
// checked key "never checked" before every check; each expression is the
// very one its indexes hold (migration 0016), and a key is never NULL, so
// the keyset comparisons hold for every row.
var sortKeys = map[Sort]string{
	SortTitle:   `{a}.title`,
	SortFailing: `coalesce({a}.failing_since, timestamptz 'infinity')`,
	SortChecked: `coalesce({a}.checked_at, timestamptz '-infinity')`,
}

// ParseSort accepts an order's name from a query string.
func ParseSort(name string) (Sort, bool) {
	s := Sort(name)
	_, ok := sortKeys[s]
	return s, ok || s == SortSite
}

func sortKey(s Sort, alias string) string { return strings.ReplaceAll(sortKeys[s], "{a}", alias) }

// orderSQL is the ORDER BY of a page: the key and then the primary key,
// reversed when paging back from a cursor (the page is turned round after
// reading, see Batch.ListAdminSeries).
func (q SeriesQuery) orderSQL() string {
	dir := ""
	if q.Before {
		dir = " DESC"
	}
	cols := []string{"s.site" + dir, "s.series_id" + dir}
	switch {
	case q.oneSiteSort():
		// One Site: the site is fixed, so the order within it is the key and
		// then the id, which series_<sort>_by_site holds (migrations 0013,
		// 0015).
		cols = []string{sortKey(q.Sort, "s") + dir, "s.series_id" + dir}
	case q.Sort != SortSite:
		cols = append([]string{sortKey(q.Sort, "s") + dir}, cols...)
	}
	return strings.Join(cols, ", ")
}

// oneSiteSort reports a list of one Site (of its kind, when a kind is asked
// too) in a sorted order. It names its Site by equality and
// orders and pages by the key and the id alone, on the order's index led by
// the Site (migrations 0013, 0015): on an index led by the sort key the Site's rows
// are interleaved with every other Site's, and among rows of one key (every
// Series with no failure row) they come after every Site before it, so the
// walk to the first page would grow with the table
// (TestEachSortAndTheSearchReadAnIndex).
func (q SeriesQuery) oneSiteSort() bool {
	return q.Sort != SortSite && q.Site != "" && len(q.sites()) == 1
}

// cursorSQL is the keyset condition: rows after the cursor row in the
// page's order (before it, paging back). A sorted order reads the cursor
// row's own key by its primary key, so the address carries only (site, id)
// and never a title. A cursor row deleted meanwhile yields an empty page,
// whose links lead back to the first.
func (q SeriesQuery) cursorSQL() string {
	op := ">"
	if q.Before {
		op = "<"
	}
	if q.Sort == SortSite {
		if q.Before {
			return `(s.site <= @after_site AND (s.site, s.series_id) < (@after_site, @after_id))`
		}
		return keysetSQL("s")
	}
	key := `(SELECT ` + sortKey(q.Sort, "c") + ` FROM series c WHERE c.site = @after_site AND c.series_id = @after_id)`
	if q.oneSiteSort() {
		return `((` + sortKey(q.Sort, "s") + `, s.series_id) ` + op + ` (` + key + `, @after_id))`
	}
	return `((` + sortKey(q.Sort, "s") + `, s.site, s.series_id) ` + op + ` (` + key + `, @after_site, @after_id))`
}

// shownNameSQL is what a row shows where a title belongs, over a Series
// aliased {a}: its title, or while the title is unknown the last segment of
// its address with the dashes as spaces (what adapters.NameFromAddress makes
// of it, less its ".html", a leading short id and percent-decoding, which a
// piece of the name still matches), or its series_id when it has no address.
// Migration 0023's trigram index series_shown_trgm holds this expression.
const shownNameSQL = `(CASE WHEN btrim({a}.title) <> '' THEN {a}.title ` +
	`WHEN {a}.url <> '' THEN translate(substring({a}.url FROM '([^/]*)/*$'), '-', ' ') ` +
	`ELSE {a}.series_id END)`

func shownName(alias string) string { return strings.ReplaceAll(shownNameSQL, "{a}", alias) }

// searchSQL is the owner's search: a case-insensitive substring of what the
// row shows (issue 23: a Series never read is shown by its address's name
// and found by it), which series_shown_trgm answers without reading every
// row.
var searchSQL = shownName("s") + ` ILIKE @q`

// likePattern makes the owner's words a LIKE pattern that matches them as
// typed: %, _ and \ are literal, and the words may sit anywhere in a title.
func likePattern(q string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.TrimSpace(q)) + "%"
}
