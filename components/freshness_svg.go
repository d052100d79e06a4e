package components

import (
	"math"
	"strconv"
	"time"
)

// The freshness plot's geometry: the last 24 hours along x (one slot per
// hour, oldest on the left), the detection delay up y on a log scale from
// ten seconds to a day (a longer delay is drawn to the top; its number is in
// the bar's title and the description), so a minute and an hour both read.
// Per hour with any new chapter, an outlined bar to its 95th percentile and
// a solid one to its median; an hour without one draws nothing. The numbers
// are formatted here; templ writes them as attributes, escaped like any
// other.

const (
	plotW, plotH     = 360.0, 120.0
	plotLeft         = 48.0  // room for the tick labels
	plotRight        = 4.0   // room for the last bar's edge
	plotTop          = 8.0   // room for the top tick's label
	plotBottom       = 96.0  // the x axis
	plotFloor        = 10.0  // seconds at the axis
	plotCeil         = 86400 // seconds at the top: a day, and any longer delay
	plotMinBar       = 2.0   // an hour with chapters shows, even at no delay
	plotSlotGap      = 2.0
	plotMedianInset  = 0.25 // the median bar is half the p95 bar's width
	plotAxisLabelY   = 113.0
	plotTickLabelOff = 4.0
)

// plotTicks are the delays the y axis names.
var plotTicks = []struct {
	d     time.Duration
	label string
}{{time.Minute, "1 min"}, {10 * time.Minute, "10 min"}, {time.Hour, "1 h"}, {24 * time.Hour, "1 day+"}}

// PlotRect is one bar.
type PlotRect struct{ X, Y, W, H string }

// PlotHour is one hour's bars and its tooltip.
type PlotHour struct {
	P95, Median PlotRect
	Label       string
}

// PlotTick is one y-axis line and its label.
type PlotTick struct{ Y, LabelY, Label string }

// FreshnessPlot is the drawn plot.
type FreshnessPlot struct {
	ViewBox             string
	Left, Right, Bottom string // the axis line's ends and height
	LabelY              string // the x axis labels' baseline
	Mid                 string // the x of "12 h ago"
	Ticks               []PlotTick
	Hours               []PlotHour
}

func num(f float64) string { return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) }

// plotY is the height of delay d on the plot's log scale, clamped to it.
func plotY(d time.Duration) float64 {
	s := min(max(d.Seconds(), plotFloor), plotCeil)
	frac := (math.Log10(s) - math.Log10(plotFloor)) / (math.Log10(plotCeil) - math.Log10(plotFloor))
	return plotBottom - frac*(plotBottom-plotTop)
}

// bar is the rect from the axis up to delay d, in the slot at x of width w.
func bar(x, w float64, d time.Duration) PlotRect {
	y := min(plotY(d), plotBottom-plotMinBar)
	return PlotRect{X: num(x), Y: num(y), W: num(w), H: num(plotBottom - y)}
}

// freshnessPlot lays out f's hours.
func freshnessPlot(f Freshness) FreshnessPlot {
	p := FreshnessPlot{ViewBox: "0 0 " + num(plotW) + " " + num(plotH), Left: num(plotLeft), Right: num(plotW - plotRight),
		Bottom: num(plotBottom), LabelY: num(plotAxisLabelY), Mid: num((plotLeft + plotW - plotRight) / 2)}
	for _, t := range plotTicks {
		y := plotY(t.d)
		p.Ticks = append(p.Ticks, PlotTick{Y: num(y), LabelY: num(y + plotTickLabelOff), Label: t.label})
	}
	if len(f.Hours) == 0 {
		return p
	}
	slot := (plotW - plotLeft - plotRight) / float64(len(f.Hours))
	for i, h := range f.Hours {
		if h.N == 0 {
			continue
		}
		x, w := plotLeft+float64(i)*slot+plotSlotGap/2, slot-plotSlotGap
		p.Hours = append(p.Hours, PlotHour{Label: h.Label, P95: bar(x, w, h.P95),
			Median: bar(x+w*plotMedianInset, w*(1-2*plotMedianInset), h.Median)})
	}
	return p
}
