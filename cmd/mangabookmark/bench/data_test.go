package bench

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// TestTheBenchDataSetHasTheShapeItClaims loads the bench's data set at a
// small size and checks the proportions the bench's table is read against:
// six Sites, about 10% failure rows (copied onto their Series), some
// Finished, Bookmarks from many Readers, fourteen days of passes, every Lane
// paused, every Series' Bookmark count true, and the same rows from the same
// seed.
func TestTheBenchDataSetHasTheShapeItClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	load := func() [8]int64 {
		url := storetest.URL(t)
		if err := loadBenchData(ctx, url, 3000, now); err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var v [8]int64
		if err := conn.QueryRow(ctx, `SELECT
			(SELECT count(DISTINCT site) FROM series),
			(SELECT count(*) FROM poll_failures),
			(SELECT count(*) FROM series WHERE failing_since IS NOT NULL),
			(SELECT count(*) FROM series WHERE finished_at IS NOT NULL),
			(SELECT count(DISTINCT reader_id) FROM bookmarks),
			(SELECT count(*) FROM poll_passes),
			(SELECT count(*) FROM poll_lanes WHERE coalesce(paused_until, timestamptz '-infinity') <= $1),
			(SELECT count(*) FROM series s WHERE bookmark_count <> (SELECT count(*) FROM bookmarks b WHERE b.site = s.site AND b.series_id = s.series_id))`,
			now).Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]); err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := load()
	if v[0] != 6 || v[1] < 200 || v[1] > 400 || v[2] != v[1] || v[3] < 80 || v[3] > 230 || v[4] < 150 || v[5] != 6*(14*144+1) || v[6] != 0 || v[7] != 0 {
		t.Errorf("sites %d, failure rows %d (copied %d), finished %d, readers %d, passes %d, running lanes %d, wrong bookmark counts %d", v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7])
	}
	if again := load(); again != v {
		t.Errorf("the same seed gave %v, then %v", v, again)
	}
}
