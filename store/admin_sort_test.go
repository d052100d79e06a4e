package store_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// Every order pages forward and back by keyset, neither skipping nor
// repeating a row, with the search and a filter stacked on it; ties on the
// key (shared titles, equal check times, no failure row) are broken by the
// primary key, across Sites that share series ids.
func TestEachSortPagesForwardAndBackWithSearchAndFilterStacked(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	s := store.New(pool)
	ctx := context.Background()
	old, fresh := t0.Add(-30*24*time.Hour), t0.Add(-10*time.Minute)
	var series []storetest.Series
	var failures []storetest.Failure
	for k0, site := range word.Sites {
		k := k0 + 1
		for i := range 24 {
			r := storetest.Series{Site: site, ID: fmt.Sprintf("s%02d", i), URL: "https://example.test/" + strconv.Itoa(i),
				Kind: "novel", LatestChapter: strconv.Itoa(i), CheckedAt: fresh.Add(-time.Duration(i%3) * time.Millisecond)}
			switch i % 4 {
			case 0:
				r.Title = "Solo Leveling " + strconv.Itoa(i%3)
			case 1:
				r.Title = "The 100% Hero_" + strconv.Itoa(i)
			case 2:
				r.Title = "solo camping"
			default:
				r.Title = "Other " + strconv.Itoa(i)
			}
			if k%2 == 0 {
				r.Kind = "manga"
			}
			if i%5 == 0 {
				r.CheckedAt = time.Time{}
			}
			series = append(series, r)
			if d := i % 10; d == 1 || d == 3 || d == 6 {
				failures = append(failures, storetest.Failure{Site: site, Series: r.ID, Outcome: word.Errors,
					FailingSince: old.Add(time.Duration(len(site)%3) * time.Second)})
			}
		}
	}
	storetest.Insert(t, pool, series...)
	storetest.Insert(t, pool, failures...)
	key := func(r store.AdminSeries) string { return r.Site + ":" + r.SeriesID }
	for _, sort := range store.Sorts {
		for _, base := range []store.SeriesQuery{{}, {Q: "solo"}, {Q: "100%"}, {Filter: store.FilterFailing, Q: "o"}, {Kind: "novel", Q: "SOLO"}} {
			base.Sort = sort
			name := string(sort) + "/" + string(base.Filter) + "/" + base.Q + "/" + base.Kind
			whole, err := s.ListAdminSeries(ctx, func() store.SeriesQuery { q := base; q.Limit = 500; return q }(), t0)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var want []string
			for _, r := range whole.Rows {
				want = append(want, key(r))
				if base.Q != "" && !strings.Contains(strings.ToLower(r.Title), strings.ToLower(base.Q)) {
					t.Errorf("%s: %q does not hold %q", name, r.Title, base.Q)
				}
			}
			if len(want) < 8 {
				t.Fatalf("%s: %d rows; the fixture proves nothing", name, len(want))
			}
			if base.Q == "100%" && len(want) != 6*6 {
				t.Errorf("%s: %% must be literal: %d rows", name, len(want))
			}
			checkOrder(t, name, sort, whole.Rows)
			// Forward, five at a time.
			var got []string
			q := base
			q.Limit = 5
			for range 100 {
				p, err := s.ListAdminSeries(ctx, q, t0)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range p.Rows {
					got = append(got, key(r))
				}
				if !p.More {
					break
				}
				last := p.Rows[len(p.Rows)-1]
				q.AfterSite, q.AfterID = last.Site, last.SeriesID
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s forward:\n got %v\nwant %v", name, got, want)
			}
			// Back from the last row, five at a time.
			got = nil
			q = base
			q.Limit, q.Before = 5, true
			lastSite, lastID, _ := strings.Cut(want[len(want)-1], ":")
			q.AfterSite, q.AfterID = lastSite, lastID
			for range 100 {
				p, err := s.ListAdminSeries(ctx, q, t0)
				if err != nil {
					t.Fatal(err)
				}
				var page []string
				for _, r := range p.Rows {
					page = append(page, key(r))
				}
				got = append(page, got...)
				if !p.More {
					break
				}
				q.AfterSite, q.AfterID = p.Rows[0].Site, p.Rows[0].SeriesID
			}
			if !slices.Equal(got, want[:len(want)-1]) {
				t.Errorf("%s back:\n got %v\nwant %v", name, got, want[:len(want)-1])
			}
		}
	}
}

// checkOrder holds a whole list to its order's key, ties broken by Site
// then id.
func checkOrder(t *testing.T, name string, sort store.Sort, rows []store.AdminSeries) {
	t.Helper()
	k := func(r store.AdminSeries) int64 {
		switch sort {
		case store.SortChecked:
			return r.CheckedAt.UnixMilli()
		case store.SortFailing:
			if r.FailingSince.IsZero() {
				return 1 << 62
			}
			return r.FailingSince.UnixMilli()
		}
		return 0
	}
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if sort == store.SortTitle && a.Title != b.Title {
			continue // the database's collation orders titles; equal ones tie-break below
		}
		if k(a) != k(b) {
			if k(a) > k(b) {
				t.Errorf("%s: %s/%s before %s/%s", name, a.Site, a.SeriesID, b.Site, b.SeriesID)
			}
			continue
		}
		if a.Site > b.Site || a.Site == b.Site && a.SeriesID >= b.SeriesID {
			t.Errorf("%s: tie not broken by the primary key at %s/%s, %s/%s", name, a.Site, a.SeriesID, b.Site, b.SeriesID)
		}
	}
}
