package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Search and sort stack with the filters and keep the canonical address;
// the pager walks forward and back under a sort and lands where it began.
func TestSearchAndSortStackWithTheFiltersAndPageBothWays(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var fs []fixture
	for i := range 23 {
		title := "Solo " + string(rune('A'+i))
		if i%3 == 0 {
			title = "Other " + string(rune('A'+i))
		}
		fs = append(fs, fixture{id: "s" + string(rune('a'+i)), title: title, url: addr, chapter: "3", checkedAgo: time.Duration(i+1) * time.Minute})
	}
	h.seed(fs)
	c := h.owner()
	a := h.get(c, "/admin/series?q=solo&sort=checked")
	if a.status != http.StatusOK {
		t.Fatalf("status %d", a.status)
	}
	ids := rowIDs(a)
	if len(ids) != 15 || ids[0] != "sw" || ids[len(ids)-1] != "sb" {
		t.Errorf("search solo sorted by last checked: %v", ids)
	}
	if !strings.Contains(squash(a.testid("list-caption").Text()), "titles holding “solo”") || a.testid("search-input").AttrOr("value", "") != "solo" {
		t.Errorf("caption %q", squash(a.testid("list-caption").Text()))
	}
	if got := h.get(c, "/admin/series?q=solo&filter=never-checked").testid("list-empty").Length(); got != 1 {
		t.Errorf("search does not stack with the filter")
	}
	if got := h.get(c, "/admin/series?sort=sideways"); got.status != http.StatusBadRequest {
		t.Errorf("an unknown order answered %d", got.status)
	}
	// Under sort=title, pages of 50 hold everything; make the pages small by
	// seeding past one page is costly, so walk the title order with the
	// store's own limit through many Series instead.
	var more []fixture
	for i := range 60 {
		more = append(more, fixture{id: "t" + string(rune('a'+i/26)) + string(rune('a'+i%26)), title: "Zed " + string(rune('a'+i%26)) + string(rune('a'+i/26)), url: addr, chapter: "1", checkedAgo: time.Minute})
	}
	h.seed(more)
	first := h.get(c, "/admin/series?q=zed&sort=title")
	next := first.testid("page-next").AttrOr("href", "")
	if len(rowIDs(first)) != 50 || !strings.Contains(next, "sort=title") || !strings.Contains(next, "q=zed") || first.testid("page-prev").Length() != 0 {
		t.Fatalf("first page: %d rows, next %q", len(rowIDs(first)), next)
	}
	second := h.get(c, next)
	if len(rowIDs(second)) != 10 || second.testid("page-next").Length() != 0 {
		t.Errorf("second page: %d rows", len(rowIDs(second)))
	}
	back := h.get(c, second.testid("page-prev").AttrOr("href", ""))
	if strings.Join(rowIDs(back), ",") != strings.Join(rowIDs(first), ",") {
		t.Errorf("Previous does not return to the first page:\n%v\n%v", rowIDs(back), rowIDs(first))
	}
	if back.testid("page-next").AttrOr("href", "") != next {
		t.Errorf("back on page one, Next leads to %q, want %q", back.testid("page-next").AttrOr("href", ""), next)
	}
}

// Finishing a batch takes one confirm step that names each Series with its
// completion hint; nothing changes before the box is ticked.
func TestABulkFinishNeedsItsConfirmAndABulkPollForcesEach(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	picks := url.Values{"action": {"finish"}, "back": {"/admin/series?filter=site-completed"},
		"pick": {"asurascans:completed", "asurascans:completed-failing"}}
	before := h.snapshot()
	step := h.post(c, "/admin/series/bulk", picks, "HX-Request", "true")
	confirm := step.testid("bulk-confirm")
	if step.status != http.StatusOK || confirm.Length() != 1 || step.testid("bulk-pick").Length() != 2 ||
		step.testid("bulk-pick-hint").Length() != 2 || confirm.Find(`input[name="confirm"]:checked`).Length() != 0 {
		t.Fatalf("step one: %d %q", step.status, squash(step.body))
	}
	if _, ok := step.testid("bulk-confirm-box").Attr("autofocus"); !ok {
		t.Errorf("focus does not move to the confirm box")
	}
	picks.Set("step", "confirm")
	if a := h.post(c, "/admin/series/bulk", picks, "HX-Request", "true"); a.status != http.StatusUnprocessableEntity || a.testid("bulk-confirm").Length() != 1 {
		t.Errorf("an unticked confirm answered %d", a.status)
	}
	if h.snapshot() != before {
		t.Fatal("a bulk Finish changed something before its confirmation")
	}
	picks.Set("confirm", "yes")
	done := h.post(c, "/admin/series/bulk", picks, "HX-Request", "true")
	if !strings.Contains(done.testid("message").Text(), "Finished 2 Series") {
		t.Errorf("done: %q", done.testid("message").Text())
	}
	if rows := done.find(`#series-list[hx-swap-oob] [data-testid="series-row"]`); rows.Length() != 0 {
		t.Errorf("the site-completed list still shows %d rows after they were finished", rows.Length())
	}
	if n := h.count(`SELECT count(*) FROM series WHERE series_id IN ('completed', 'completed-failing') AND finished_at = $1`, t0); n != 2 {
		t.Errorf("%d finished", n)
	}
	// Without JavaScript: a 303 back to the list page it came from.
	plain := h.post(c, "/admin/series/bulk", picks)
	if plain.status != http.StatusSeeOther || plain.header.Get("Location") != "/admin/series?filter=site-completed" {
		t.Errorf("plain answer %d %q", plain.status, plain.header.Get("Location"))
	}

	wakes := h.listenWakes()
	poll := h.post(c, "/admin/series/bulk", url.Values{"action": {"poll"}, "pick": {"asurascans:stale", "novelfull:novel-stale"}}, "HX-Request", "true")
	if !strings.Contains(poll.testid("message").Text(), "Poll requested for 2 Series") {
		t.Errorf("poll: %q", poll.testid("message").Text())
	}
	if n := h.count(`SELECT count(*) FROM series WHERE series_id IN ('stale', 'novel-stale') AND force_poll_at = $1`, t0); n != 2 {
		t.Errorf("%d forced", n)
	}
	if got := strings.Join(wakes(), ","); !strings.Contains(got, "asurascans") || !strings.Contains(got, "novelfull") {
		t.Errorf("the Lanes woken: %q", got)
	}
	for _, bad := range []url.Values{{"action": {"poll"}}, {"action": {"poll"}, "pick": {"nowhere:x"}}, {"action": {"explode"}, "pick": {"asurascans:stale"}}} {
		if a := h.post(c, "/admin/series/bulk", bad, "HX-Request", "true"); a.status != http.StatusUnprocessableEntity || a.testid("message").Length() != 1 {
			t.Errorf("%v answered %d", bad, a.status)
		}
	}
}
