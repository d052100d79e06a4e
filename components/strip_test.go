package components_test

import (
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/word"
)

// TestTheStripStacksEachQuarterHoursPollsAndMarksTheOnesWithout renders a
// strip of three quarter hours with passes: one whose Polls read, failed
// and were refused, one half as busy, and one stall pass that made no Poll.
// Each draws one slot; the busiest bar spans the plot and stacks read,
// failed and turned away from the axis up; the smaller is half as tall; the
// stall wears a mark below the axis; the words are text, never markup.
func TestTheStripStacksEachQuarterHoursPollsAndMarksTheOnesWithout(t *testing.T) {
	buckets := make([]components.StripBucket, 96)
	buckets[10] = components.StripBucket{Passes: 2, Counts: word.Counts{OK: 4, Errors: 2, Refused: 2}, Label: "busy"}
	buckets[50] = components.StripBucket{Passes: 1, Counts: word.Counts{OK: 4}, Label: "half"}
	buckets[95] = components.StripBucket{Passes: 1, Stalled: 1, Label: "<b>stall</b>"}
	doc := renderDoc(t, components.LanePasses("comix", components.PassStrip{Buckets: buckets, Desc: "<i>8 Polls read</i>"}))
	slots := doc.Find(`svg[data-testid="lane-strip"] g.slot`)
	if slots.Length() != 3 {
		t.Fatalf("%d quarter hours drawn, want 3", slots.Length())
	}
	axis := attr(t, doc.Find(`line.axis`), "y1")
	top := attr(t, doc.Find(`line.grid`), "y1")
	busy := slots.Eq(0).Find("rect")
	if busy.Length() != 3 {
		t.Fatalf("the busy quarter hour stacks %d parts, want read, failed and turned away", busy.Length())
	}
	y := axis
	for i, tone := range []string{"tone-ok", "tone-fault", "tone-away"} {
		r := busy.Eq(i)
		if !r.HasClass(tone) {
			t.Errorf("part %d is %q, want %s", i, r.AttrOr("class", ""), tone)
		}
		if got := attr(t, r, "y") + attr(t, r, "height"); got != y {
			t.Errorf("part %d ends at %v, not on the part below it at %v", i, got, y)
		}
		y = attr(t, r, "y")
	}
	if y != top {
		t.Errorf("the busiest quarter hour reaches %v, not the top line at %v", y, top)
	}
	if h, full := attr(t, slots.Eq(1).Find("rect.tone-ok"), "height"), axis-top; h != full/2 {
		t.Errorf("4 Polls against 8 draw %v high, want half of %v", h, full)
	}
	if got := doc.Find(`text.tick`).First().Text(); got != "8" {
		t.Errorf("the top line says %q, want the busiest quarter hour's 8 Polls", got)
	}
	stall := slots.Eq(2).Find("rect")
	if stall.Length() != 1 || !stall.HasClass("mark-read-nothing") || attr(t, stall, "y") <= axis {
		t.Errorf("the stall draws %d rects, want one mark below the axis: %v", stall.Length(), stall.AttrOr("class", ""))
	}
	if x0, x1 := attr(t, busy.First(), "x"), attr(t, stall, "x"); x0 >= x1 {
		t.Errorf("the oldest quarter hour (x %v) is not left of the newest (x %v)", x0, x1)
	}
	html, _ := doc.Html()
	if strings.Contains(html, "<b>") || strings.Contains(html, "<i>") || doc.Find(`svg desc`).Text() != "<i>8 Polls read</i>" ||
		slots.Eq(2).Find("title").Text() != "<b>stall</b>" {
		t.Errorf("the strip's words became markup or went missing:\n%s", html)
	}
	if svg := doc.Find("svg"); svg.AttrOr("role", "") != "img" || svg.AttrOr("aria-labelledby", "") != "strip-t-comix strip-d-comix" {
		t.Errorf("the strip is not an image named by its title and description: %v", svg.Nodes[0].Attr)
	}
	if html, _ := doc.Html(); strings.Contains(html, "ember") {
		t.Error("the strip wears the ember")
	}
	empty := renderDoc(t, components.LanePasses("comix", components.PassStrip{Empty: true}))
	if empty.Find("svg").Length() != 0 || empty.Find(`[data-testid="lane-passes-none"]`).Length() != 1 {
		t.Error("a day without a pass draws a strip")
	}
}

// TestTheFailingLineJoinsConsecutiveHoursAndBreaksAtAGap renders a week
// with two runs of recorded hours and one lone hour: the path has one "M"
// per run, the lone hour and the newest have a dot, the highest count
// reaches a round top line, and the newest hour is at the right edge.
func TestTheFailingLineJoinsConsecutiveHoursAndBreaksAtAGap(t *testing.T) {
	points := []components.LinePoint{
		{HoursAgo: 167, N: 0},
		{HoursAgo: 100, N: 4}, {HoursAgo: 99, N: 5}, {HoursAgo: 98, N: 3},
		{HoursAgo: 2, N: 1}, {HoursAgo: 1, N: 2}, {HoursAgo: 0, N: 2},
	}
	doc := renderDoc(t, components.FailingLineSection(components.FailingLine{Points: points, Summary: "2 now", Desc: "<i>numbers</i>"}))
	d := doc.Find(`svg[data-testid="failing-plot"] path.line`).AttrOr("d", "")
	if m, l := strings.Count(d, "M"), strings.Count(d, "L"); m != 3 || l != 4 {
		t.Errorf("the path %q has %d runs and %d joins, want 3 and 4", d, m, l)
	}
	dots := doc.Find(`circle.dot`)
	if dots.Length() != 2 {
		t.Fatalf("%d dots, want the lone hour and the newest", dots.Length())
	}
	right := attr(t, doc.Find(`line.axis`), "x2")
	if x := attr(t, dots.Last(), "cx"); x != right {
		t.Errorf("the newest hour is at x %v, not the right edge %v", x, right)
	}
	if x, left := attr(t, dots.First(), "cx"), attr(t, doc.Find(`line.axis`), "x1"); x <= left {
		t.Errorf("the hour 167 hours ago is at x %v, not inside the left edge %v", x, left)
	}
	if got := doc.Find(`text.tick`).First().Text(); got != "5" {
		t.Errorf("the top line says %q, want the round 5", got)
	}
	if g := doc.Find(`line.grid`).AttrOr("y1", ""); !strings.Contains(" "+d+" ", " "+g+" ") {
		t.Errorf("no point of %q reaches the top line at %s", d, g)
	}
	if doc.Find("svg desc").Text() != "<i>numbers</i>" || doc.Find(`[data-testid="failing-line-text"]`).Text() != "2 now" {
		t.Error("the line's words went missing or became markup")
	}
	none := renderDoc(t, components.FailingLineSection(components.FailingLine{}))
	if none.Find("svg").Length() != 0 || !strings.Contains(none.Text(), "No hour recorded yet") {
		t.Error("a week with no hour recorded draws a line")
	}
}

// TestAYoungServersFailingLineStartsAtItsFirstRecord renders the line of a
// server whose records began 3 hours ago: the first hour sits at the left
// edge, which names when the server first started, the newest at the right
// edge, and neither the heading nor the axis speaks of a week it never
// lived.
func TestAYoungServersFailingLineStartsAtItsFirstRecord(t *testing.T) {
	points := []components.LinePoint{{HoursAgo: 3, N: 0}, {HoursAgo: 2, N: 5}, {HoursAgo: 1, N: 0}, {HoursAgo: 0, N: 0}}
	doc := renderDoc(t, components.FailingLineSection(components.FailingLine{Points: points, Young: true, Started: 3, Summary: "0 now"}))
	axis := doc.Find(`line.axis`)
	left, right := attr(t, axis, "x1"), attr(t, axis, "x2")
	d := doc.Find(`path.line`).AttrOr("d", "")
	if !strings.HasPrefix(d, "M"+axis.AttrOr("x1", "")+" ") {
		t.Errorf("the line %q does not start at the left edge %v", d, left)
	}
	if x := attr(t, doc.Find(`circle.dot`).Last(), "cx"); x != right {
		t.Errorf("the newest hour is at x %v, not the right edge %v", x, right)
	}
	if got := doc.Find(`[data-testid="failing-plot-start"]`).Text(); got != "first started 3 h ago" {
		t.Errorf("the left edge reads %q", got)
	}
	if txt := doc.Text(); strings.Contains(txt, "7 days") || strings.Contains(txt, "3½") {
		t.Errorf("a 3-hour-old server's line speaks of a week: %q", txt)
	}
	if got := doc.Find("h2").Text(); got != "Failing Series since the server first started" {
		t.Errorf("the heading reads %q", got)
	}
	// Its first hour: one dot at the right edge, the left edge this hour.
	first := renderDoc(t, components.FailingLineSection(components.FailingLine{Points: []components.LinePoint{{N: 0}}, Young: true}))
	if x := attr(t, first.Find(`circle.dot`), "cx"); x != attr(t, first.Find(`line.axis`), "x2") {
		t.Errorf("a first hour's point is at x %v, not the right edge", x)
	}
	if got := first.Find(`[data-testid="failing-plot-start"]`).Text(); got != "first started this hour" {
		t.Errorf("the left edge of a first hour reads %q", got)
	}
}
