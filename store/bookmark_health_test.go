package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// A Reader's failing mark and the owner's failing filter are one rule
// (issue 24, item 5): for Series failing just past, just inside and well
// inside ownerWindow, with and without a chapter, Bookmark.Failing names
// exactly the Series the owner's failing list holds. The row also carries
// the Finished flag and the Completion hint, from the same query.
func TestAReadersFailingMarkIsTheOwnersFailingFilter(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	addReader(t, s, "r")
	cases := []struct {
		id      string
		chapter bool
		failFor time.Duration // 0: no failure row
	}{
		{"past", true, word.OwnerWindow + time.Minute},
		{"inside", true, word.OwnerWindow - time.Minute},
		{"no-chapter", false, 2 * word.OwnerWindow},
		{"finished", true, 0},
	}
	for _, c := range cases {
		if _, err := s.AddAddress(ctx, novel(c.id, "r", ""), addNow); err != nil {
			t.Fatal(err)
		}
		if c.chapter {
			if _, err := s.Pool().Exec(ctx, `UPDATE series SET latest_chapter_num = 3 WHERE series_id = $1`, c.id); err != nil {
				t.Fatal(err)
			}
		}
		if c.failFor > 0 {
			storetest.Insert(t, s.Pool(), storetest.Failure{Site: "novelfull", Series: c.id, Outcome: word.Errors, FailingSince: addNow.Add(-c.failFor)})
		}
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE series SET finished_at = $1, site_completed_at = $1 WHERE series_id = 'finished'`, addNow); err != nil {
		t.Fatal(err)
	}
	owner, err := s.ListAdminSeries(ctx, store.SeriesQuery{Filter: store.FilterFailing, Limit: 50}, addNow)
	if err != nil {
		t.Fatal(err)
	}
	var ownerFailing, readerFailing []string
	for _, o := range owner.Rows {
		ownerFailing = append(ownerFailing, o.SeriesID)
	}
	rows, err := s.ListBookmarks(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range rows {
		if b.Failing(addNow) {
			readerFailing = append(readerFailing, b.SeriesID)
		}
		if marked := b.SeriesID == "finished"; marked == b.FinishedAt.IsZero() || marked == b.SiteCompletedAt.IsZero() {
			t.Errorf("%s: finished %v, completed %v", b.SeriesID, b.FinishedAt, b.SiteCompletedAt)
		}
	}
	slices.Sort(ownerFailing)
	slices.Sort(readerFailing)
	if !slices.Equal(ownerFailing, []string{"past"}) || !slices.Equal(readerFailing, ownerFailing) {
		t.Errorf("owner's failing %v, Reader's failing marks %v, want [past] for both", ownerFailing, readerFailing)
	}
}
