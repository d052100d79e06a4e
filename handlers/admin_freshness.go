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

// landingFreshness is the landing page's one freshness figure, and when
// its number comes from fallback reads, that: the Lanes whose listing is
// off, failing or Broken find new chapters by the Series' own pace only
// (admin_listing.go).
func landingFreshness(d Deps, delays store.Delays, lanes []store.LaneReach, now time.Time) components.LandingFreshness {
	f := components.LandingFreshness{Text: "No new chapters detected in the last 24 hours."}
	if delays.N > 0 {
		f = components.LandingFreshness{N: delays.N, Figure: strconv.FormatInt(delays.N, 10),
			Text: strings.TrimPrefix(chapters(delays.N), strconv.FormatInt(delays.N, 10)+" ") +
				" detected in the last 24 hours, median delay " + delayWords(delays.Median) + "."}
	}
	var sites []string
	for _, r := range lanes {
		if _, failing := listingFailing(d, r); failing || schedule.Broken(r.ListingEmptySince, now) {
			sites = append(sites, r.Site)
		}
	}
	switch {
	case d.ListingOff:
		f.Fallback = "From fallback reads only: no listing is read (LISTING_EVERY=0), so new chapters are found by the Series' own pace."
	case len(sites) > 0:
		whose := "its"
		if len(sites) > 1 {
			whose = "their"
		}
		f.Fallback = "Partly from fallback reads: the listing of " + andList(sites) + " is not being read, so " + whose +
			" new chapters are found by the Series' own pace only"
		if delays.N > 0 {
			f.Fallback += fmt.Sprintf("; %d of these %d no listing named first", delays.Unlisted, delays.N)
		}
		f.Fallback += ". Each Lane's listing line says why."
	}
	return f
}
