package handlers

import (
	"fmt"
	"github.com/mangabookmark/mangabookmark/adapters"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
)

// Sites are the six supported Sites (SPEC.md glossary), in display order.
var Sites = adapters.Sites

func knownSite(s string) bool { return slices.Contains(Sites, s) }

// wantsFragment: htmx asked for a region. A boosted request and a history
// restore carry HX-Request too but want the whole page.
func wantsFragment(r *http.Request) bool {
	return r.Header.Get("HX-Request") == "true" &&
		r.Header.Get("HX-Boosted") == "" &&
		r.Header.Get("HX-History-Restore-Request") == ""
}

// ago is a duration as the owner reads it: one look at every age, from
// minutes to years ("5 min", "3 h", "4 d", "3 mo", "2 y").
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "1 min"
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h", int(d/time.Hour))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%d d", int(d/(24*time.Hour)))
	case d < 2*365*24*time.Hour:
		return fmt.Sprintf("%d mo", int(d/(30*24*time.Hour)))
	default:
		return fmt.Sprintf("%d y", int(d/(365*24*time.Hour)))
	}
}

// since is the age of a unix-ms stamp at now.
func since(now time.Time, ms int64) string {
	return ago(now.Sub(time.UnixMilli(ms)))
}

// factOf builds the fact line of one Series.
func factOf(s store.AdminSeries, now time.Time) components.Fact {
	f := components.Fact{Site: s.Site, Kind: s.Kind, Checked: "never checked"}
	if s.LatestChapter != nil {
		f.Latest = *s.LatestChapter
		if s.LatestRaisedBy != nil {
			f.RaisedBy = s.RaisedByName
			if f.RaisedBy == "" {
				f.RaisedBy = "a Reader"
			}
		}
	}
	if s.CheckedAt > 0 {
		f.Checked = "checked " + since(now, s.CheckedAt) + " ago"
	}
	if s.FinishedAt > 0 {
		f.Finished = since(now, s.FinishedAt)
	}
	if s.FailureOutcome != "" {
		f.Failure = &components.FailureMarker{Outcome: s.FailureOutcome, Age: since(now, s.FailingSince)}
	}
	return f
}

func seriesHref(site, id string) string {
	return "/admin/series/" + pathEscape(site) + "/" + pathEscape(id)
}

// coverURL keeps a Cover only when it is an https address: the stored value
// came from a Site's page, and the CSP allows no other images anyway.
func coverURL(u string) string {
	if strings.HasPrefix(u, "https://") {
		return u
	}
	return ""
}
