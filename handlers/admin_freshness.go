package handlers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/poller/schedule"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// The freshness figures of the owner's pages (issue 20, Show it): how long
// the last day's new chapters waited to be detected, per Lane with its plot
// and over all Sites on the landing, and each Lane's listing state.

// delayWords is a detection delay as the owner reads it: seconds under two
// minutes (where word.Age says "1 minute" for anything), word.Age above.
func delayWords(d time.Duration) string {
	if d < 2*time.Minute {
		n := int(d.Round(time.Second) / time.Second)
		if n == 1 {
			return "1 second"
		}
		return strconv.Itoa(n) + " seconds"
	}
	return word.Age(d)
}

// chapters is "1 new chapter" or "N new chapters".
func chapters(n int64) string {
	if n == 1 {
		return "1 new chapter"
	}
	return strconv.FormatInt(n, 10) + " new chapters"
}

// freshnessOf is one Lane's freshness block: the summary line, the hours of
// its plot (oldest first) and their accessible description.
func freshnessOf(f store.Freshness, now time.Time) components.Freshness {
	v := components.Freshness{Empty: f.N == 0}
	parts := []string{"No new chapters in 24 h"}
	if f.N > 0 {
		parts = []string{chapters(f.N) + " in 24 h", "median " + delayWords(f.Median), "p95 " + delayWords(f.P95)}
	}
	switch {
	// A check is a Poll attempted, reached or not (CONTEXT.md, Check):
	// the figure says "check", as a Series checked but never reached was
	// never read.
	case f.NeverChecked():
		parts = append(parts, "a Series never checked yet")
	case f.Pollable:
		parts = append(parts, "oldest check "+ago(now, f.OldestCheck))
	}
	v.Summary = strings.Join(parts, " · ")
	desc := []string{v.Summary + "."}
	for i, h := range f.Hours {
		hour := components.FreshnessHour{N: h.N, Median: h.Median, P95: h.P95}
		if h.N > 0 {
			ago := store.FreshnessHours - i
			hour.Label = fmt.Sprintf("%d to %d hours ago: %s, median %s, p95 %s", ago, ago-1, chapters(h.N),
				delayWords(h.Median), delayWords(h.P95))
			desc = append(desc, hour.Label+".")
		}
		v.Hours = append(v.Hours, hour)
	}
	v.Desc = strings.Join(desc, " ")
	return v
}

// listingState is the Lane's listing state: when it was last read (or
// that it is off or never read), and, for a listing that has parsed to
// nothing for schedule.BrokenAfter, the fault with its fix.
func listingState(d Deps, l store.AdminLane, now time.Time) (state, broken string) {
	switch {
	case d.ListingOff:
		return "listing off (LISTING_EVERY=0)", ""
	case l.ListingReadAt.IsZero():
		return "listing not read yet", ""
	}
	state = "listing read " + ago(now, l.ListingReadAt)
	switch {
	case schedule.Broken(l.ListingEmptySince, now):
		broken = fmt.Sprintf("The %s listing has named no Series for %s: its reader no longer matches the page. "+
			"To fix: update mangabookmark. Until then this Lane reads by cadence and the backstop alone.",
			l.Site, since(now, l.ListingEmptySince))
	case !l.ListingEmptySince.IsZero():
		state += ", named no Series for " + since(now, l.ListingEmptySince)
	}
	return state, broken
}

// landingFreshness is the landing page's one freshness figure.
func landingFreshness(d store.Delays) components.LandingFreshness {
	if d.N == 0 {
		return components.LandingFreshness{Text: "No new chapters detected in the last 24 hours."}
	}
	return components.LandingFreshness{N: d.N, Figure: strconv.FormatInt(d.N, 10),
		Text: strings.TrimPrefix(chapters(d.N), strconv.FormatInt(d.N, 10)+" ") +
			" detected in the last 24 hours, median delay " + delayWords(d.Median) + "."}
}
