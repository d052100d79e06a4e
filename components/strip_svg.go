package components

import (
	"strconv"
	"strings"

	"github.com/mangabookmark/mangabookmark/word"
)

// The pictures of issue 23, item 11: a Lane's strip of passes and the
// failing line of /admin, drawn here as plain numbers that templ writes as
// attributes (escaped like any other). Colours are classes the stylesheet
// maps to its tokens, so both schemes hold and the owner's pages never wear
// the ember (CONTEXT.md, Rules: Owner colours).

// StripBucket is one quarter hour of a Lane's strip: its passes, how many
// were passes that read nothing (word.ReadNothingOne), their Polls' outcomes, and the same in words ("" when
// it had no pass).
type StripBucket struct {
	Passes, Stalled int
	word.Counts
	Label string
}

// PassStrip is a Lane's last day of passes, oldest quarter hour first; Desc
// is the strip's accessible description (its numbers in words).
type PassStrip struct {
	Buckets []StripBucket
	Desc    string
	Empty   bool // no pass in the day: the sentence alone, no strip
}

// The strip's geometry: the day along x in quarter hours (oldest on the
// left), the Polls of each up y on a linear scale to the busiest quarter
// hour, whose number labels the top line; below the axis a mark for a
// quarter hour whose passes made no Poll, in the fault colour for a pass
// that read nothing (word.ReadNothingOne).
const (
	stripW, stripH  = 360.0, 52.0 // low, so six Lanes still fit a phone
	stripLeft       = 28.0        // room for the top line's number
	stripRight      = 4.0
	stripTop        = 6.0
	stripBottom     = 32.0 // the x axis
	stripMarkY      = 34.0
	stripMarkH      = 3.0
	stripMinBar     = 1.5 // a quarter hour with a Poll shows
	stripGap        = 0.6
	stripLabelY     = 49.0
	stripTickOffset = 4.0
)

// Tones of a Poll's outcome on the strip: read, failed for the Series, or
// turned away before the Series could be read (the Site's challenge, or the
// route out unreachable), which says nothing about the Series.
const (
	ToneOK    = "ok"
	ToneFault = "fault"
	ToneAway  = "away"
)

// tone is o's tone on the strip.
func tone(o word.Outcome) string {
	switch o {
	case word.OK:
		return ToneOK
	case word.Refused, word.Unreachable:
		return ToneAway
	}
	return ToneFault
}

// stripTones is the stacking order, bottom up.
var stripTones = []string{ToneOK, ToneFault, ToneAway}

// StripPart is one tone's share of a quarter hour's bar.
type StripPart struct {
	Tone string
	PlotRect
}

// StripSlot is one drawn quarter hour: its bar's parts, its mark ("" for
// none, "idle" or word.ReadNothingMark) and its words.
type StripSlot struct {
	Parts []StripPart
	Mark  string
	MarkR PlotRect
	Label string
}

// StripPlot is the drawn strip.
type StripPlot struct {
	ViewBox                  string
	Left, Right, Top, Bottom string
	Max, MaxY                string // the busiest quarter hour's Polls and its label's baseline
	LabelY, Mid              string
	Slots                    []StripSlot
}

// polls is how many Polls b made.
func (b StripBucket) polls() int {
	n := 0
	for _, o := range word.Outcomes {
		n += b.Of(o)
	}
	return n
}

// stripPlot lays out s's quarter hours.
func stripPlot(s PassStrip) StripPlot {
	p := StripPlot{ViewBox: "0 0 " + num(stripW) + " " + num(stripH), Left: num(stripLeft), Right: num(stripW - stripRight),
		Top: num(stripTop), Bottom: num(stripBottom), MaxY: num(stripTop + stripTickOffset), LabelY: num(stripLabelY),
		Mid: num((stripLeft + stripW - stripRight) / 2)}
	most := 0
	for _, b := range s.Buckets {
		most = max(most, b.polls())
	}
	if most > 0 {
		// A day of passes that made no Poll has no scale to name.
		p.Max = strconv.Itoa(most)
	}
	if len(s.Buckets) == 0 {
		return p
	}
	slot := (stripW - stripLeft - stripRight) / float64(len(s.Buckets))
	for i, b := range s.Buckets {
		if b.Passes == 0 {
			continue
		}
		x, w := stripLeft+float64(i)*slot+stripGap/2, slot-stripGap
		out := StripSlot{Label: b.Label, Parts: stripParts(b, x, w, most)}
		switch {
		case b.Stalled > 0:
			out.Mark = word.ReadNothingMark
		case b.polls() == 0:
			out.Mark = "idle"
		}
		if out.Mark != "" {
			out.MarkR = PlotRect{X: num(x), Y: num(stripMarkY), W: num(w), H: num(stripMarkH)}
		}
		p.Slots = append(p.Slots, out)
	}
	return p
}

// stripParts stacks b's Polls by tone from the axis up, the bar as tall as
// its share of the busiest quarter hour's most Polls.
func stripParts(b StripBucket, x, w float64, most int) []StripPart {
	total := b.polls()
	if total == 0 || most == 0 {
		return nil
	}
	height := max(float64(total)/float64(most)*(stripBottom-stripTop), stripMinBar)
	per := map[string]int{}
	for _, o := range word.Outcomes {
		per[tone(o)] += b.Of(o)
	}
	var parts []StripPart
	y := stripBottom
	for _, t := range stripTones {
		if per[t] == 0 {
			continue
		}
		h := height * float64(per[t]) / float64(total)
		y -= h
		parts = append(parts, StripPart{Tone: t, PlotRect: PlotRect{X: num(x), Y: num(y), W: num(w), H: num(h)}})
	}
	return parts
}

// LinePoint is one recorded hour of the failing line: how many hours
// before now it began, its count, and whether a Site's count passed the
// figures' cap (then the sum is "at least").
type LinePoint struct {
	HoursAgo int
	N        int64
	Capped   bool
}

// FailingLine is /admin's line of failing Series over the last 7 days;
// Desc is its accessible description and Summary the line beside it. A
// server whose records began less than a week ago draws only the hours it
// lived: the line starts at its first record, never at a week of zeros.
type FailingLine struct {
	Points  []LinePoint // oldest first
	Summary string
	Desc    string
	Broken  bool // it could not be read just now
	// Young is true while the first recorded hour is less than LineHours
	// ago; Started is then how many hours ago it began (0: this hour).
	Young   bool
	Started int
}

// span is how many hours the line's x axis holds: the week, or for a
// young server the hours since its first record (at least one, so the
// current hour sits at the right edge).
func (f FailingLine) span() int {
	if !f.Young {
		return LineHours
	}
	return min(max(f.Started, 1), LineHours)
}

// startLabel names the line's left edge: "7 days ago", or when a young
// server first started (its first recorded hour).
func (f FailingLine) startLabel() string {
	switch {
	case !f.Young:
		return "7 days ago"
	case f.Started < 1:
		return "first started this hour"
	}
	return "first started " + strconv.Itoa(f.Started) + " h ago"
}

// failingLineTitle is the line's heading, and with each its image's title.
func failingLineTitle(f FailingLine, each bool) string {
	what := "Failing Series"
	if each {
		what += " each hour"
	}
	if f.Young {
		return what + " since the server first started"
	}
	return what + ", last 7 days"
}

// LineHours is the failing line's width in hours.
const LineHours = 7 * 24

// The line's geometry: the week along x (oldest on the left), the count up
// y on a linear scale from 0 to a round number at or above the highest.
const (
	lineW, lineH   = 360.0, 96.0
	lineLeft       = 36.0
	lineRight      = 6.0
	lineTop        = 8.0
	lineBottom     = 72.0
	lineLabelY     = 89.0
	lineTickOffset = 4.0
	lineDot        = 2.5
)

// LinePlot is the drawn line: its path (one run of consecutive hours per
// "M", so an hour nobody recorded is a gap, never a zero) and a dot for the
// newest hour and for every hour with no neighbour to join.
type LinePlot struct {
	ViewBox                  string
	Left, Right, Top, Bottom string
	Max, MaxY, ZeroY         string
	LabelY, Mid              string
	Path                     string
	Dots                     []PlotDot
}

// PlotDot is one dot of the line.
type PlotDot struct{ X, Y, R string }

// roundUp is the least of 1, 2, 5 times a power of ten at or above n (at
// least 1), so the top line reads a round number.
func roundUp(n int64) int64 {
	if n <= 1 {
		return 1
	}
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
	}
}

// linePlot lays out f's points.
func linePlot(f FailingLine) LinePlot {
	p := LinePlot{ViewBox: "0 0 " + num(lineW) + " " + num(lineH), Left: num(lineLeft), Right: num(lineW - lineRight),
		Top: num(lineTop), Bottom: num(lineBottom), MaxY: num(lineTop + lineTickOffset), ZeroY: num(lineBottom + lineTickOffset),
		LabelY: num(lineLabelY), Mid: num((lineLeft + lineW - lineRight) / 2)}
	var highest int64
	for _, pt := range f.Points {
		highest = max(highest, pt.N)
	}
	top, span := roundUp(highest), f.span()
	p.Max = strconv.FormatInt(top, 10)
	xy := func(pt LinePoint) (float64, float64) {
		x := lineLeft + float64(span-min(max(pt.HoursAgo, 0), span))/float64(span)*(lineW-lineLeft-lineRight)
		return x, lineBottom - float64(pt.N)/float64(top)*(lineBottom-lineTop)
	}
	dot := func(x, y float64) { p.Dots = append(p.Dots, PlotDot{X: num(x), Y: num(y), R: num(lineDot)}) }
	var path strings.Builder
	for i, pt := range f.Points {
		x, y := xy(pt)
		joined := i > 0 && f.Points[i-1].HoursAgo == pt.HoursAgo+1
		next := i+1 < len(f.Points) && f.Points[i+1].HoursAgo == pt.HoursAgo-1
		cmd := "M"
		if joined {
			cmd = "L"
		}
		path.WriteString(cmd + num(x) + " " + num(y) + " ")
		if (!joined && !next) || i == len(f.Points)-1 {
			dot(x, y)
		}
	}
	p.Path = strings.TrimSpace(path.String())
	return p
}
