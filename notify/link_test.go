package notify_test

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// The adapter-broken message links to a list holding exactly the Series the
// condition counted: not Finished, with an address, a no_chapter failure
// row older than ownerWindow. Most of them never yielded a chapter, so the
// failing list (which needs a Latest Chapter) would be empty, and a message
// must never send the owner to a page that looks healthy.
func TestTheAdapterBrokenMessageLinksToExactlyTheSeriesItCounted(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config{})
	ctx := context.Background()
	h.series("demonicscans", 9)
	h.failing("demonicscans", 5, "no_chapter", hours(0.5)) // s0..s4: counted
	pool := h.st.Pool()
	// s5 failed long ago too, with another word; s6 yields no chapter since
	// less than ownerWindow ago; s7 is Finished; s8 is healthy. None counts.
	storetest.Insert(t, pool,
		storetest.Failure{Site: word.Demonicscans, Series: "s5", Outcome: word.Errors, FailingSince: hours(0.5)},
		storetest.Failure{Site: word.Demonicscans, Series: "s6", Outcome: word.NoChapter, FailingSince: hours(5)},
		storetest.Failure{Site: word.Demonicscans, Series: "s7", Outcome: word.NoChapter, FailingSince: hours(0.5)})
	if _, err := pool.Exec(ctx, `UPDATE series SET finished_at = now() WHERE series_id = 's7'`); err != nil {
		t.Fatal(err)
	}
	// s0 once yielded a chapter: it counts all the same.
	if _, err := pool.Exec(ctx, `UPDATE series SET latest_chapter_num = 4, polled_chapter_num = 4 WHERE series_id = 's0'`); err != nil {
		t.Fatal(err)
	}
	h.run("demonicscans", 0, 14, healthyPass)
	if _, acc := h.sink.counts(); acc != 1 {
		t.Fatalf("%d messages, want the one adapter-broken", acc)
	}
	var p struct {
		Embeds []struct {
			URL         string `json:"url"`
			Description string `json:"description"`
		} `json:"embeds"`
	}
	if err := json.Unmarshal(h.sink.accepted[0], &p); err != nil || len(p.Embeds) != 1 {
		t.Fatalf("payload: %s", h.sink.accepted[0])
	}
	e := p.Embeds[0]
	if !strings.Contains(e.Description, "demonicscans' Series") || strings.Contains(e.Description, "demonicscans's") {
		t.Errorf("description %q: want the possessive demonicscans'", e.Description)
	}
	link, err := url.Parse(e.URL)
	if err != nil || link.Path != "/admin/series" {
		t.Fatalf("link %q: want the Series list", e.URL)
	}
	q := link.Query()
	if q.Get("site") != "demonicscans" {
		t.Errorf("link %q: want the Site set", e.URL)
	}
	f, ok := store.ParseFilter(q.Get("filter"))
	if !ok {
		t.Fatalf("link %q: no such filter", e.URL)
	}
	page, err := h.st.ListAdminSeries(ctx, store.SeriesQuery{Filter: f, Site: q.Get("site")}, hours(13))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range page.Rows {
		got = append(got, r.SeriesID)
	}
	if want := []string{"s0", "s1", "s2", "s3", "s4"}; !slices.Equal(got, want) {
		t.Errorf("the linked list %q holds %v, want exactly the counted %v", e.URL, got, want)
	}
}
