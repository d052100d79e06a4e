package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// TestEveryFilterListAvoidsASeqScanOfSeries EXPLAINs each filter's list (first
// page and a keyset page, with and without a Site) and each figure at 50 000
// Series and fails on a sequential scan of series.
var partialIndexed = map[store.Filter]bool{
	store.FilterNeverChecked: true, store.FilterStale: true, store.FilterUnpollable: true,
	store.FilterNoChapter: true, store.FilterSiteCompleted: true, store.FilterFinished: true,
	store.FilterOrphan: true, // series_orphan (migration 0005)
}

func TestEveryFilterListAvoidsASeqScanOfSeries(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 50 000 Series")
	}
	t.Parallel()
	pool := storetest.Pool(t, nil)
	now := time.Now()
	seedMany(t, pool, 50_000, now)
	for _, f := range store.Filters {
		for _, q := range []store.SeriesQuery{
			{Filter: f},
			{Filter: f, AfterSite: "comix", AfterID: "b0020000"},
			{Filter: f, Site: "kagane"},
			{Filter: f, Kind: "novel"},
		} {
			sql, args, err := store.ListSQL(q, now)
			if err != nil {
				t.Fatal(err)
			}
			plan := explain(t, pool, sql, args)
			if strings.Contains(plan, "Seq Scan on series") {
				t.Errorf("list %+v scans series sequentially:\n%s", q, plan)
			}
			if testing.Verbose() && q.AfterSite == "" && q.Site == "" && q.Kind == "" {
				t.Logf("list filter=%q:\n%s", f, plan)
			}
		}
		sql, args, err := store.CountSQL(store.SeriesQuery{Filter: f}, now)
		if err != nil {
			t.Fatal(err)
		}
		plan := explain(t, pool, sql, args)
		if testing.Verbose() {
			t.Logf("figure filter=%q:\n%s", f, plan)
		}
		// The figures of the filters with their own partial index must read
		// only that index; all, failing and unverified may hash the table
		// when the planner finds that cheaper (see AdminStats).
		if partialIndexed[f] && strings.Contains(plan, "Seq Scan on series") {
			t.Errorf("figure %q scans series sequentially:\n%s", f, plan)
		}
	}
}
