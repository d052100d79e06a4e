package handlers_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// TestEachLaneShowsItsDayOfPassesAsAStrip seeds comix's day: a quarter hour
// whose passes read, failed and were refused, a stall an hour ago and an
// error three hours ago. The
// Lanes page draws comix's strip with those two quarter hours, and says
// their numbers in its description; a Lane with no pass says so instead
// (issue 23, item 11).
func TestEachLaneShowsItsDayOfPassesAsAStrip(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	storetest.Insert(t, h.pool,
		storetest.Pass{Site: word.Comix, StartedAt: t0.Add(-5 * time.Minute), Due: 5, Checked: 5, Counts: word.Counts{OK: 3, NotFound: 1, Refused: 1}},
		storetest.Pass{Site: word.Comix, StartedAt: t0.Add(-10 * time.Minute), Due: 1, Checked: 1, Counts: word.Counts{OK: 1}},
		storetest.Pass{Site: word.Comix, StartedAt: t0.Add(-time.Hour - time.Minute), Due: 2},
		storetest.Pass{Site: word.Comix, StartedAt: t0.Add(-3 * time.Hour), Due: 1, Checked: 1, Counts: word.Counts{Errors: 1}},
	)
	for _, path := range []string{"/admin/lanes", "/admin/lanes/comix"} {
		a := h.get(h.owner(), path, "HX-Request", "true")
		if a.status != http.StatusOK {
			t.Fatalf("%s: status %d", path, a.status)
		}
		strip := lane(a, "comix").Find(`svg[data-testid="lane-strip"]`)
		if strip.Length() != 1 || strip.AttrOr("role", "") != "img" {
			t.Fatalf("%s: comix has %d strips", path, strip.Length())
		}
		if n := strip.Find(`g.slot`).Length(); n != 3 {
			t.Errorf("%s: %d quarter hours drawn, want 3", path, n)
		}
		newest := "the last 15 minutes: 2 passes, 6 Polls: 4 read, 1 page gone, 1 refused by the Site"
		if got := text(strip.Find(`g.slot title`).Last()); got != newest {
			t.Errorf("%s: the newest quarter hour reads %q, want %q", path, got, newest)
		}
		if n := strip.Find(`g.slot`).Last().Find(`rect`).Length(); n != 3 {
			t.Errorf("%s: the newest quarter hour stacks %d parts, want read, failed and refused", path, n)
		}
		stall := "from 1 h 15 min to 1 h ago: 1 pass, no Poll; 1 pass that read nothing"
		desc := text(strip.Find(`desc`))
		lone := "from 3 h 15 min to 3 h ago: 1 pass, 1 Poll: 1 failed read"
		for _, want := range []string{"In the last 24 hours, 4 passes, 7 Polls: 4 read, 1 page gone, 1 failed read, 1 refused by the Site; 1 pass that read nothing.", newest, stall, lone} {
			if !strings.Contains(desc, want) {
				t.Errorf("%s: the strip's description %q lacks %q", path, desc, want)
			}
		}
		if got := strip.AttrOr("aria-labelledby", ""); got != "strip-t-comix strip-d-comix" || strip.Find(`#strip-d-comix`).Length() != 1 {
			t.Errorf("%s: the strip is labelled by %q", path, got)
		}
		if path == "/admin/lanes" {
			kagane := lane(a, "kagane")
			if kagane.Find(`svg[data-testid="lane-strip"]`).Length() != 0 || text(kagane.Find(`[data-testid="lane-passes-none"]`)) != "No pass in the last 24 h." {
				t.Error("a Lane without a pass draws a strip or says nothing")
			}
		}
	}
}

// One pass that could not reach its Site, in the Lane's first minute, is a
// pass that read nothing, never "a stall": Stall is the owner notice a run
// of such passes becomes after 12 hours (CONTEXT.md, Pass that read nothing).
func TestOneUnreachablePassIsNotCalledAStall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	storetest.Insert(t, h.pool,
		storetest.Pass{Site: word.Asurascans, StartedAt: t0.Add(-time.Minute), Due: 1, Counts: word.Counts{Unreachable: 1}})
	a := h.get(h.owner(), "/admin/lanes")
	strip := lane(a, "asurascans").Find(`svg[data-testid="lane-strip"]`)
	if strip.Length() != 1 {
		t.Fatalf("asurascans has %d strips", strip.Length())
	}
	words := text(strip.Find(`desc`)) + " " + text(strip.Find(`g.slot title`))
	if !strings.Contains(words, "1 Site not reached; 1 pass that read nothing") || strings.Contains(strings.ToLower(words), "stall") {
		t.Errorf("the strip reads %q: want the pass that read nothing, and no stall", words)
	}
	if mark := strip.Find(`g.slot rect.mark-read-nothing`); mark.Length() != 1 {
		t.Errorf("the quarter hour wears %d read-nothing marks, want 1", mark.Length())
	}
	if key := text(a.testid("strip-key")); strings.Contains(strings.ToLower(key), "stall") || !strings.Contains(key, "a pass that read nothing") {
		t.Errorf("the strip key reads %q", key)
	}
}

// TestAdminShowsTheWeekOfFailingSeriesAsALine seeds the failing history of
// two Sites over three hours with a gap: /admin draws the line, summed over
// the Sites and ending at the live failing figure, and its description
// holds the newest, the highest and each day's highest (issue 23, item 11).
func TestAdminShowsTheWeekOfFailingSeriesAsALine(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	hour := t0.Truncate(time.Hour)
	storetest.Insert(t, h.pool,
		storetest.FailingCount{Site: word.Comix, At: hour.Add(-50 * time.Hour), Failing: 4},
		storetest.FailingCount{Site: word.Kagane, At: hour.Add(-50 * time.Hour), Failing: 3},
		storetest.FailingCount{Site: word.Comix, At: hour.Add(-time.Hour), Failing: 1},
		storetest.FailingCount{Site: word.Comix, At: hour, Failing: 2},
		// Older than the week: not on the line.
		storetest.FailingCount{Site: word.Comix, At: hour.Add(-8 * 24 * time.Hour), Failing: 40},
	)
	a := h.get(h.owner(), "/admin")
	if a.status != http.StatusOK {
		t.Fatalf("status %d", a.status)
	}
	plot := a.find(`svg[data-testid="failing-plot"]`)
	if plot.Length() != 1 || plot.AttrOr("role", "") != "img" {
		t.Fatalf("/admin has %d failing lines", plot.Length())
	}
	if d := plot.Find(`path.line`).AttrOr("d", ""); strings.Count(d, "M") != 2 || strings.Count(d, "L") != 1 {
		t.Errorf("the line %q is not a lone hour and a run of two", d)
	}
	// The current hour is the live figure (no Series fails here), never
	// the hour's record: the line agrees with the figure above it.
	summary := "Failing for over 12 hours: 0 Series now; the week's highest 7, 2 days ago."
	if got := text(a.find(`[data-testid="failing-line-text"]`)); got != summary {
		t.Errorf("the line's summary reads %q, want %q", got, summary)
	}
	if got, want := text(plot.Find(`desc`)), summary+" The highest of each day recorded: 2 to 3 days ago 7; the last day 1."; got != want {
		t.Errorf("the line's description reads %q, want %q", got, want)
	}
	if got := plot.AttrOr("aria-labelledby", ""); got != "failing-t failing-d" {
		t.Errorf("the line is labelled by %q", got)
	}
	// A fresh server has recorded no hour: a sentence, no empty plot.
	fresh := newHarness(t)
	b := fresh.get(fresh.owner(), "/admin")
	if b.find(`svg[data-testid="failing-plot"]`).Length() != 0 || !strings.Contains(text(b.find(`[data-testid="failing-line-text"]`)), "No hour recorded yet") {
		t.Error("a fresh server draws an empty failing line")
	}
}

// TestAYoungServersFailingLineStartsWhenItsRecordsStart seeds the failing
// history of a server whose first hour was recorded 3 hours ago: /admin's
// line starts there, never a week of zeros the server never lived, and its
// summary names the highest since the server first started, not the
// week's. A server recording its first hour says it has none to compare.
func TestAYoungServersFailingLineStartsWhenItsRecordsStart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	hour := t0.Truncate(time.Hour)
	storetest.Insert(t, h.pool,
		storetest.FailingCount{Site: word.Comix, At: hour.Add(-3 * time.Hour), Failing: 0},
		storetest.FailingCount{Site: word.Comix, At: hour.Add(-time.Hour), Failing: 5},
		storetest.FailingCount{Site: word.Kagane, At: hour.Add(-time.Hour), Failing: 0},
		storetest.FailingCount{Site: word.Comix, At: hour, Failing: 0},
	)
	a := h.get(h.owner(), "/admin")
	if a.status != http.StatusOK {
		t.Fatalf("status %d", a.status)
	}
	summary := "Failing for over 12 hours: 0 Series now; since the server first started 3 hours ago, the highest 5, 1 hour ago."
	if got := text(a.find(`[data-testid="failing-line-text"]`)); got != summary {
		t.Errorf("the line's summary reads %q, want %q", got, summary)
	}
	plot := a.find(`svg[data-testid="failing-plot"]`)
	if got := text(plot.Find(`[data-testid="failing-plot-start"]`)); got != "first started 3 h ago" {
		t.Errorf("the line's left edge reads %q", got)
	}
	if d, x1 := plot.Find(`path.line`).AttrOr("d", ""), plot.Find(`line.axis`).AttrOr("x1", "?"); !strings.HasPrefix(d, "M"+x1+" ") {
		t.Errorf("the line %q does not start at the left edge %s", d, x1)
	}
	if txt := text(a.find(`[data-testid="failing-line"]`)); strings.Contains(txt, "week") || strings.Contains(txt, "7 days") {
		t.Errorf("a 3-hour-old server speaks of a week: %q", txt)
	}
	fresh := newHarness(t)
	storetest.Insert(t, fresh.pool, storetest.FailingCount{Site: word.Comix, At: hour, Failing: 0})
	b := fresh.get(fresh.owner(), "/admin")
	if got, want := text(b.find(`[data-testid="failing-line-text"]`)), "Failing for over 12 hours: 0 Series now, and none since the server first started this hour."; got != want {
		t.Errorf("a first hour's summary reads %q, want %q", got, want)
	}
}
