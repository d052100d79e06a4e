package store_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// indexes lists the index names a plan reads.
func (p planNode) indexes() []string {
	var out []string
	if p.Index != "" {
		out = append(out, p.Index)
	}
	for _, c := range p.Plans {
		out = append(out, c.indexes()...)
	}
	return out
}

// TestEachSortAndTheSearchReadAnIndex plans, under EXPLAIN ANALYZE over the
// 30 000 Series of seedWide (VACUUM ANALYZEd), exactly the list statement
// each sort sends — first page, a deep keyset page forward and back, and on
// one Site — and the title search: every sort walks its own index
// (migration 0010; one Site's, led by the Site, migration 0013) with no
// sequential scan and no sort, touching a page and a few rows more, however
// many rows share a key (seedWide's check times and failure ages are three
// values each); a narrow search reads the trigram index, and a broad
// one is bounded too (what it sorts is what matched, never the table).
func TestEachSortAndTheSearchReadAnIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 30 000 Series")
	}
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	now := time.Now()
	seedWide(t, pool, 30_000, now)

	plan := func(q store.SeriesQuery) (planNode, string) {
		t.Helper()
		b := s.NewBatch()
		if err := b.ListAdminSeries(q, now, &store.AdminSeriesPage{}); err != nil {
			t.Fatal(err)
		}
		qs := store.QueuedStatements(b)
		if len(qs) != 1 {
			t.Fatalf("%d statements", len(qs))
		}
		return analyze(t, pool, qs[0])
	}
	// b0015002 is on comix, b0015003 on kagane (seedWide: Site i % 6).
	index := map[store.Sort]string{store.SortTitle: "series_by_title", store.SortFailing: "series_by_failing", store.SortChecked: "series_by_checked"}
	bySite := map[store.Sort]string{store.SortTitle: "series_title_by_site", store.SortFailing: "series_failing_by_site", store.SortChecked: "series_checked_by_site"}
	for _, sort := range []store.Sort{store.SortTitle, store.SortFailing, store.SortChecked} {
		for _, q := range []store.SeriesQuery{
			{Sort: sort},
			{Sort: sort, AfterSite: "comix", AfterID: "b0015002"},
			{Sort: sort, AfterSite: "comix", AfterID: "b0015002", Before: true},
			{Sort: sort, Site: "kagane"},
			{Sort: sort, Site: "kagane", AfterSite: "kagane", AfterID: "b0015003"},
			{Sort: sort, Site: "kagane", AfterSite: "kagane", AfterID: "b0015003", Before: true},
			{Sort: sort, Site: "lightnovelworld", Kind: "novel"},
		} {
			p, raw := plan(q)
			touched, bad := p.walk()
			want := []string{index[sort]}
			if q.Site != "" {
				want = []string{bySite[sort]}
			}
			if q.Site != "" && sort == store.SortChecked {
				// On 30 000 rows PostgreSQL may still take series_by_checked
				// with the Site as its second column's condition (its walk
				// through the other Sites' entries is small here); at
				// 1 000 000 it takes the Site's own index (migration 0015).
				want = append(want, index[sort])
			}
			if len(bad) > 0 || touched > 200 || !slices.ContainsFunc(p.indexes(), func(ix string) bool { return slices.Contains(want, ix) }) {
				t.Errorf("%+v touches %.0f rows through %v, unbounded nodes %v:\n%s", q, touched, p.indexes(), bad, raw)
			} else if testing.Verbose() {
				t.Logf("%+v touches %.0f rows through %v", q, touched, p.indexes())
			}
		}
	}
	// Never read: no title, so the row shows its address's name, and the
	// search reads that (migration 0023).
	if _, err := pool.Exec(t.Context(), `UPDATE series SET title = '', url = 'https://asurascans.com/comics/solo-max-level-newbie-' || series_id
		WHERE series_id IN ('b0000101', 'b0000102', 'b0000103')`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `ANALYZE series`); err != nil {
		t.Fatal(err)
	}
	if page, err := s.ListAdminSeries(t.Context(), store.SeriesQuery{Q: "max level newbie"}, now); err != nil || len(page.Rows) != 3 {
		t.Errorf("the search by the address's name found %d rows (%v), want 3", len(page.Rows), err)
	}
	for _, q := range []store.SeriesQuery{
		{Q: "max level newbie"}, // 3 never read
		{Q: "Series 2999"},      // 11 titles
		{Q: "Series 2999", Sort: store.SortTitle},
		{Q: "series 2999", Filter: store.FilterFailing, Site: "kagane"},
		{Q: "Series 1"}, // a third of the table
		{Q: "Series 1", Sort: store.SortChecked, AfterSite: "comix", AfterID: "b0015002"},
	} {
		p, raw := plan(q)
		touched, bad := p.walk()
		// What matched may be sorted; nothing may read the table whole.
		bad = slices.DeleteFunc(bad, listMaySort)
		narrow := strings.HasSuffix(strings.ToLower(q.Q), "2999") || strings.HasSuffix(q.Q, "newbie")
		if len(bad) > 0 || touched > 1500 || narrow && !slices.Contains(p.indexes(), "series_shown_trgm") {
			t.Errorf("search %+v touches %.0f rows through %v, unbounded nodes %v:\n%s", q, touched, p.indexes(), bad, raw)
		} else if testing.Verbose() {
			t.Logf("search %+v touches %.0f rows through %v", q, touched, p.indexes())
		}
	}
}
