package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// "read" is a Poll that reached the page; "checked" a Poll attempted
// (CONTEXT.md). A Series every Poll of which found no answer is never read:
// /admin counts it so, its row says it was never reached and when it was
// last tried (not "checked", which reads as fine), and the Lanes page names
// the oldest check, never "oldest read" for a Series no Poll reached.
func TestASeriesNoPollReachedIsNeverReadOnEveryPage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	storetest.Ensure(t, h.pool, storetest.Reader{ID: "r1", Name: "Reader One"})
	storetest.Insert(t, h.pool,
		// Checked 15 seconds ago by unreachable Polls only: no number, no failure row.
		storetest.Series{Site: word.Asurascans, ID: "tried", URL: "https://asurascans.com/comics/tried", CheckedAt: t0.Add(-15 * time.Second)},
		storetest.Series{Site: word.Asurascans, ID: "read", URL: "https://asurascans.com/comics/read", Title: "Read Work",
			LatestChapter: "4", CheckedAt: t0.Add(-time.Minute)})
	storetest.Insert(t, h.pool, storetest.Bookmark{Reader: "r1", Site: word.Asurascans, Series: "tried", UpdatedAt: t0})
	c := h.owner()

	admin := h.get(c, "/admin")
	if got := text(admin.testid("stat-never-checked")); admin.status != http.StatusOK || got != "1" {
		t.Errorf("/admin's never-read figure reads %q, want 1", got)
	}
	list := h.get(c, "/admin/series")
	row := func(id string) string {
		return text(list.find(`[data-testid="series-row"][data-series-id="` + id + `"] [data-testid="fact-line"]`))
	}
	if got := row("tried"); !strings.Contains(got, "never reached: last tried 15 seconds ago") || strings.Contains(got, "checked") {
		t.Errorf("the row of a Series no Poll reached reads %q", got)
	}
	if got := row("read"); !strings.Contains(got, "checked 1 minute ago") {
		t.Errorf("the row of a Series read a minute ago reads %q", got)
	}
	lanes := h.get(c, "/admin/lanes")
	line := text(lane(lanes, "asurascans").Find(`[data-testid="lane-freshness-line"]`))
	if strings.Contains(line, "oldest read") || !strings.Contains(line, "oldest check 1 minute ago") {
		t.Errorf("the asurascans Lane reads %q, want its oldest check and no oldest read", line)
	}
}
