package handlers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// The words of the owner's pictures (issue 23, item 11): a Lane's strip of
// passes and the failing line of /admin. The SVGs say their numbers in
// these words too, for a screen reader and a pointer's tooltip.

// stripFaultsNamed is how many quarter hours with a failure or a pass that
// read nothing the strip's description names one by one; more are counted.
const stripFaultsNamed = 6

// passStripOf is a Lane's strip: each quarter hour with its words, and the
// description of the day. browser says the Site's route, which names its
// unreachable (docs/adr/0022).
func passStripOf(s store.PassStrip, site string, browser bool) components.PassStrip {
	say := func(b store.PassBucket) string { return bucketWords(b, site, browser) }
	v := components.PassStrip{Empty: true}
	var day store.PassBucket
	var faults []string
	for i, b := range s.Buckets {
		c := components.StripBucket{Passes: b.Passes, Stalled: b.Stalled, Counts: b.Counts}
		if b.Passes > 0 {
			v.Empty = false
			c.Label = quarterWords(i) + ": " + say(b)
			if b.Stalled > 0 || b.Polls() > b.OK+b.Refused+b.Unreachable {
				faults = append(faults, c.Label)
			}
		}
		day.Passes, day.Skipped, day.Stalled = day.Passes+b.Passes, day.Skipped+b.Skipped, day.Stalled+b.Stalled
		for _, o := range word.Outcomes {
			for range b.Of(o) {
				day.Add(o)
			}
		}
		v.Buckets = append(v.Buckets, c)
	}
	desc := []string{"In the last 24 hours, " + say(day) + "."}
	switch n := len(faults); {
	case n == 0:
		desc = append(desc, "No quarter hour had a failure or a "+word.ReadNothingOne+".")
	case n <= stripFaultsNamed:
		desc = append(desc, "Quarter hours with a failure or a "+word.ReadNothingOne+": "+strings.Join(faults, "; ")+".")
	default:
		desc = append(desc, fmt.Sprintf("%d quarter hours had a failure or a %s; the newest: %s.", n, word.ReadNothingOne,
			strings.Join(faults[n-stripFaultsNamed:], "; ")))
	}
	v.Desc = strings.Join(desc, " ")
	return v
}

// quarterWords names quarter hour i of the strip ("from 2 h 15 min to 2 h
// ago"; the newest is "the last 15 minutes").
func quarterWords(i int) string {
	to := (store.StripBuckets - 1 - i) * int(store.StripBucket/time.Minute)
	if to == 0 {
		return "the last 15 minutes"
	}
	return "from " + minutesWords(to+int(store.StripBucket/time.Minute)) + " to " + minutesWords(to) + " ago"
}

// minutesWords is a whole number of minutes as "45 min", "2 h" or "2 h 15 min".
func minutesWords(m int) string {
	switch h, r := m/60, m%60; {
	case h == 0:
		return strconv.Itoa(r) + " min"
	case r == 0:
		return strconv.Itoa(h) + " h"
	default:
		return fmt.Sprintf("%d h %d min", h, r)
	}
}

// bucketWords says what passes did: "3 passes, 6 Polls: 4 read, 2 failed reads;
// 1 skipped, 1 pass that read nothing" (word.ReadNothingCount: never "stall",
// the owner notice's name).
func bucketWords(b store.PassBucket, site string, browser bool) string {
	s := count(b.Passes, "pass", "passes")
	if polls := b.Polls(); polls == 0 {
		s += ", no Poll"
	} else {
		var parts []string
		for _, o := range word.Outcomes {
			if n := b.Of(o); n > 0 {
				parts = append(parts, outcomeCount(o, n, browser))
			}
		}
		s += ", " + count(polls, "Poll", "Polls") + ": " + strings.Join(parts, ", ")
	}
	var also []string
	if b.Skipped > 0 {
		also = append(also, strconv.Itoa(b.Skipped)+" skipped")
	}
	if b.Stalled > 0 {
		also = append(also, word.ReadNothingCount(b.Stalled))
	}
	if len(also) > 0 {
		s += "; " + strings.Join(also, ", ")
	}
	return s
}

// outcomeCount is n Polls of outcome o in its plain words on the Site's
// route (word.Outcome.PlainOn): "4 read", "1 page gone"; errors, whose
// plain words "read failed" are no count's noun, is "1 failed read", "2
// failed reads".
func outcomeCount(o word.Outcome, n int, browser bool) string {
	if o == word.Errors {
		return count(n, "failed read", "failed reads")
	}
	return strconv.Itoa(n) + " " + o.PlainOn(routeOf(browser))
}

// count is "1 pass" or "3 passes".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// failingLineOf is /admin's failing line: the recorded hours of the week
// ending at now, the current hour's point being the failing figure the page
// shows (live, capped: the hour's record was taken at its first pass, and
// the line never contradicts the figure beside it), a summary of its newest
// and highest, and its description (the highest of each day). The line
// starts at first, the first hour the server recorded: a server younger
// than the week draws and names only the hours it lived. With no hour
// recorded there is no line, only the sentence that says why.
func failingLineOf(points []store.FailingPoint, first, now time.Time, live int64, liveCapped bool) components.FailingLine {
	var v components.FailingLine
	hour := now.Truncate(time.Hour)
	for _, p := range points {
		ago := int(hour.Sub(p.At) / time.Hour)
		if ago <= 0 || ago >= components.LineHours {
			continue
		}
		v.Points = append(v.Points, components.LinePoint{HoursAgo: ago, N: p.Failing, Capped: p.Capped})
	}
	if len(points) == 0 {
		return v
	}
	if started := int(hour.Sub(first.Truncate(time.Hour)) / time.Hour); started < components.LineHours {
		v.Young, v.Started = true, max(started, 0)
	}
	v.Points = append(v.Points, components.LinePoint{N: live, Capped: liveCapped})
	latest, highest := v.Points[len(v.Points)-1], v.Points[0]
	days := map[int]components.LinePoint{}
	for _, p := range v.Points {
		if p.N >= highest.N {
			highest = p
		}
		if d, ok := days[p.HoursAgo/24]; !ok || p.N > d.N {
			days[p.HoursAgo/24] = p
		}
	}
	v.Summary = "Failing for over 12 hours: " + lineSummary(latest, highest, v)
	var byDay []string
	for d := components.LineHours/24 - 1; d >= 0; d-- {
		if p, ok := days[d]; ok {
			byDay = append(byDay, dayWords(d)+" "+lineFigure(p))
		}
	}
	v.Desc = v.Summary + " The highest of each day recorded: " + strings.Join(byDay, "; ") + "."
	return v
}

// lineSummary says the newest point and the highest: "the week's highest"
// once the records hold a week, else the highest since the server first
// started, named with its age.
func lineSummary(latest, highest components.LinePoint, v components.FailingLine) string {
	now := lineFigure(latest) + " Series " + hoursAgoWords(latest.HoursAgo)
	if !v.Young {
		if highest.N == latest.N {
			return now + ", the week's highest."
		}
		return now + "; the week's highest " + lineFigure(highest) + ", " + hoursAgoWords(highest.HoursAgo) + "."
	}
	started := "since the server first started " + startedWords(v.Started)
	switch {
	case highest.N == 0:
		return now + ", and none " + started + "."
	case highest.N == latest.N:
		return now + ", the highest " + started + "."
	}
	return now + "; " + started + ", the highest " + lineFigure(highest) + ", " + hoursAgoWords(highest.HoursAgo) + "."
}

// startedWords is how long ago the hour the records began was: "3 hours
// ago", or "this hour".
func startedWords(h int) string {
	if h < 1 {
		return "this hour"
	}
	return hoursAgoWords(h)
}

// lineFigure is a point's count, "N+" when a Site's count passed the cap.
func lineFigure(p components.LinePoint) string {
	s := strconv.FormatInt(p.N, 10)
	if p.Capped {
		s += "+"
	}
	return s
}

// hoursAgoWords names the hour that began h whole hours before this one;
// 0 is the live figure.
func hoursAgoWords(h int) string {
	if h == 0 {
		return "now"
	}
	return word.Age(time.Duration(h)*time.Hour) + " ago"
}

// dayWords names day d of the week, 0 the last 24 hours.
func dayWords(d int) string {
	if d == 0 {
		return "the last day"
	}
	return fmt.Sprintf("%d to %d days ago", d, d+1)
}
