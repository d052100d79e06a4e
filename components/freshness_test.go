package components_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/mangabookmark/mangabookmark/components"
)

func attr(t *testing.T, s *goquery.Selection, name string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s.AttrOr(name, ""), 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s.AttrOr(name, ""), err)
	}
	return f
}

// TestThePlotDrawsEachHourOnALogScaleAndEscapesItsWords renders a plot of
// three hours: no delay, a minute against an hour, and two days. Every bar
// stands on the axis; an hour with chapters shows even at no delay; a
// longer delay is a taller bar; one past a day stops at the top; the words
// are text, never markup.
func TestThePlotDrawsEachHourOnALogScaleAndEscapesItsWords(t *testing.T) {
	hours := make([]components.FreshnessHour, 24)
	hours[0] = components.FreshnessHour{N: 1, Label: "no delay"}
	hours[10] = components.FreshnessHour{N: 2, Median: time.Minute, P95: time.Hour, Label: "a minute"}
	hours[23] = components.FreshnessHour{N: 1, Median: 48 * time.Hour, P95: 48 * time.Hour, Label: "<b>two days</b>"}
	doc := renderDoc(t, components.LaneFreshness("comix", components.Freshness{Summary: "4 new chapters", Hours: hours, Desc: "<i>desc</i>"}))
	bars := doc.Find(`g.hour`)
	if bars.Length() != 3 {
		t.Fatalf("%d hours drawn, want 3", bars.Length())
	}
	top := func(i int, class string) (y, h float64) {
		r := bars.Eq(i).Find("rect." + class)
		return attr(t, r, "y"), attr(t, r, "height")
	}
	axis := attr(t, doc.Find(`line.axis`), "y1")
	for i := range 3 {
		for _, c := range []string{"p95", "median"} {
			if y, h := top(i, c); y+h != axis {
				t.Errorf("hour %d's %s bar ends at %v, not on the axis at %v", i, c, y+h, axis)
			}
		}
	}
	if _, h := top(0, "median"); h <= 0 {
		t.Errorf("an hour whose chapters waited no time draws a bar %v high", h)
	}
	_, med := top(1, "median")
	_, p95 := top(1, "p95")
	if p95 <= med {
		t.Errorf("an hour's p95 bar (%v) is not taller than its median bar (%v)", p95, med)
	}
	if y, _ := top(2, "p95"); y != attr(t, doc.Find(`line.grid`).Last(), "y1") {
		t.Errorf("two days reaches %v, not the top line", y)
	}
	if x0, x1 := attr(t, bars.Eq(0).Find("rect.p95"), "x"), attr(t, bars.Eq(2).Find("rect.p95"), "x"); x0 >= x1 {
		t.Errorf("the oldest hour (x %v) is not left of the newest (x %v)", x0, x1)
	}
	html, _ := doc.Html()
	if strings.Contains(html, "<b>") || strings.Contains(html, "<i>") || doc.Find(`g.hour title`).Last().Text() != "<b>two days</b>" {
		t.Errorf("the plot's words became markup:\n%s", html)
	}
	if empty := renderDoc(t, components.LaneFreshness("comix", components.Freshness{Summary: "No new chapters in 24 h", Empty: true})); empty.Find("svg").Length() != 0 {
		t.Error("an empty window draws a plot")
	}
}
