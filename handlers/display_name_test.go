package handlers_test

import (
	"strings"
	"testing"
	"time"
)

// A Series whose page gave no title is shown, on the admin list, its detail
// page and a Reader's Bookmarks, by a name read from its address, never by its
// percent-encoded id; a parsed title still wins.
func TestASeriesWithoutATitleIsShownByAReadableName(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const id = "Revenge-of-the-Iron%25252DBlooded-Sword-Hound"
	h.seed([]fixture{
		{site: "demonicscans", id: id, url: "https://demonicscans.org/manga/" + id, chapter: "12", checkedAgo: time.Minute, bookmarked: true},
		{site: "demonicscans", id: "Martial-Peak", title: "Martial Peak (Official)", url: "https://demonicscans.org/manga/Martial-Peak", chapter: "3671", checkedAgo: time.Minute},
	})
	c := h.owner()
	list := h.get(c, "/admin/series?site=demonicscans")
	const want = "Revenge of the Iron-Blooded Sword Hound"
	link := rowOf(list, id).Find("a.title")
	if got := strings.TrimSpace(link.Text()); got != want {
		t.Errorf("list row reads %q, want %q", got, want)
	}
	if got := strings.TrimSpace(rowOf(list, "Martial-Peak").Find("a.title").Text()); got != "Martial Peak (Official)" {
		t.Errorf("a titled row reads %q", got)
	}
	href, ok := link.Attr("href")
	if !ok {
		t.Fatal("the row has no link")
	}
	detail := h.get(c, href)
	if got := strings.TrimSpace(detail.testid("series-detail").Find("h1").First().Text()); got != want {
		t.Errorf("detail heading reads %q, want %q", got, want)
	}
	if got := detail.find("title").Text(); !strings.HasPrefix(got, want) {
		t.Errorf("detail <title> %q", got)
	}
	mine := h.get(h.client("r1"), "/")
	if got := strings.TrimSpace(mine.find(`[data-testid="bookmark"][data-series-id="` + id + `"] .title`).Text()); got != want {
		t.Errorf("the Reader's Bookmark reads %q, want %q", got, want)
	}
	// The detail page shows the stored address as it is, and only there.
	if body := list.find("body").Text(); strings.Contains(body, "%25") {
		t.Errorf("the list shows a percent-encoded name: %q", body)
	}
}
