package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/word"
)

// pauseChoices are the lengths of a Pause the owner may choose.
var pauseChoices = []struct {
	value string
	d     time.Duration
	label string
}{
	{"1h", time.Hour, "1 hour"},
	{"6h", 6 * time.Hour, "6 hours"},
	{"12h", 12 * time.Hour, "12 hours"},
	{"24h", 24 * time.Hour, "1 day"},
	{"72h", 72 * time.Hour, "3 days"},
	{"168h", 168 * time.Hour, "1 week"},
}

func pauseOptions() []components.Option {
	var o []components.Option
	for _, c := range pauseChoices {
		o = append(o, components.Option{Value: c.value, Label: c.label})
	}
	return o
}

// laneRowOf builds one Lane's row.
func laneRowOf(d Deps, l store.AdminLane, now time.Time) components.LaneRow {
	row := components.LaneRow{
		Site: l.Site, Base: "/admin/lanes/" + url.PathEscape(l.Site), Route: word.RoutePlain, Passes: l.Passes,
		// Navigation, not attached to a number (seed 001): one link per Site.
		FailingHref: listHref(store.FilterFailing, l.Site, "", "", ""),
	}
	for _, o := range word.Outcomes {
		row.Counts = append(row.Counts, components.LaneCount{Word: o, N: l.Of(o)})
	}
	if d.browserSite(l.Site) {
		row.Route = word.RouteBrowser
	}
	switch {
	case l.PausedUntil.After(now):
		row.State, row.Paused = "paused until "+until(now, l.PausedUntil), true
	case l.RefuseUntil.After(now):
		row.State, row.StateFault = "refusing until "+until(now, l.RefuseUntil), true
	case l.LastSkip == word.SkipBrowserDown:
		row.State, row.StateFault = "browser down", true
	case l.LastSkip == word.SkipNoBrowser:
		row.State, row.StateFault = "browser down: no sidecar configured", true
	default:
		row.State = "running"
	}
	if l.LastStartedAt.IsZero() {
		row.LastPass = "never"
	} else {
		row.LastPass = fmt.Sprintf("%s ago: %d due, %d checked", since(now, l.LastStartedAt), l.LastDue, l.LastChecked)
		if l.LastSkip != word.SkipNone {
			row.LastPass += ", skipped (" + string(l.LastSkip) + ")"
		}
	}
	if !l.ForcePollAt.IsZero() && l.ForcePollAt.After(l.LastStartedAt) {
		row.ForcePending = since(now, l.ForcePollAt)
	}
	return row
}

// lanesPage builds /admin/lanes. mark, when set, adjusts one Lane's row
// (a control's refusal shown without JavaScript).
func lanesPage(d Deps, r *http.Request, now time.Time, lanes []store.AdminLane, mark func(*components.LaneRow)) (components.LanesPage, error) {
	var status notify.Status
	if d.Notices != nil {
		var err error
		if status, err = d.Notices.Status(r.Context(), now); err != nil {
			return components.LanesPage{}, err
		}
	}
	p := components.LanesPage{Window: word.Age(word.OwnerWindow), Pauses: pauseOptions()}
	for _, l := range lanes {
		row := laneRowOf(d, l, now)
		if mark != nil {
			mark(&row)
		}
		p.Lanes = append(p.Lanes, row)
	}
	p.NoticesOff = !status.Enabled
	if !status.WebhookDeadAt.IsZero() {
		p.WebhookDead = word.Age(now.Sub(status.WebhookDeadAt))
	}
	for _, n := range status.Notices {
		p.Notices = append(p.Notices, noticeView(n, now))
	}
	return p, nil
}

// handleAdminLanes is /admin/lanes.
func handleAdminLanes(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, now := r.Context(), d.now()
		lanes, err := d.Store.AdminLanes(ctx, now)
		var p components.LanesPage
		if err == nil {
			p, err = lanesPage(d, r, now, lanes, nil)
		}
		if err != nil {
			failStore(w, r, d.Logger, err, "The Lanes could not be read. Try again.", "admin lanes")
			return
		}
		render(w, r, d.Logger, http.StatusOK, components.AdminLanesPage(viewerFrom(ctx), p))
	})
}

// laneControl parses, lets act write, then answers htmx with the Lane's
// row and a plain browser with a 303 to the Lanes page.
func laneControl(d Deps, act func(r *http.Request, site string) (done string, status int, refusal string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
		if err := r.ParseForm(); err != nil {
			fail(w, r, d.Logger, http.StatusBadRequest, "That form could not be read.")
			return
		}
		site := urlParam(r, "site")
		if !word.KnownSite(site) {
			fail(w, r, d.Logger, http.StatusNotFound, "There is no such Lane.")
			return
		}
		done, status, refusal := act(r, site)
		switch {
		case status == http.StatusNotFound:
			fail(w, r, d.Logger, status, "There is no such Lane.")
			return
		case status >= 500:
			fail(w, r, d.Logger, status, refusal)
			return
		case status == 0 && !wantsFragment(r):
			http.Redirect(w, r, "/admin/lanes", http.StatusSeeOther)
			return
		}
		now := d.now()
		lanes, err := d.Store.AdminLanes(r.Context(), now)
		if err != nil {
			failStore(w, r, d.Logger, err, "The Lane could not be read. Try again.", "admin lanes")
			return
		}
		for _, l := range lanes {
			if l.Site != site {
				continue
			}
			row := laneRowOf(d, l, now)
			row.Message, row.Fault = done, false
			if refusal != "" {
				row.Message, row.Fault = refusal, true
			}
			if status == 0 {
				status = http.StatusOK
			}
			if !wantsFragment(r) {
				// A refusal without JavaScript: the whole page, the message on
				// its row, and the notices as the page always shows them.
				p, err := lanesPage(d, r, now, lanes, func(o *components.LaneRow) {
					if o.Site == site {
						*o = row
					}
				})
				if err != nil {
					failStore(w, r, d.Logger, err, "The Lanes could not be read. Try again.", "admin lanes")
					return
				}
				render(w, r, d.Logger, status, components.AdminLanesPage(viewerFrom(r.Context()), p))
				return
			}
			render(w, r, d.Logger, status, components.LaneRowView(row, pauseOptions(), word.Age(word.OwnerWindow)))
			return
		}
		fail(w, r, d.Logger, http.StatusNotFound, "There is no such Lane.")
	})
}

func handleForceLanePoll(d Deps) http.Handler {
	return laneControl(d, func(r *http.Request, site string) (string, int, string) {
		st, msg := storeResult(d, "force lane", d.Store.ForceLanePoll(r.Context(), site, d.now()))
		return "Pass requested.", st, msg
	})
}

func handlePauseLane(d Deps) http.Handler {
	return laneControl(d, func(r *http.Request, site string) (string, int, string) {
		choice := r.PostForm.Get("for")
		for _, c := range pauseChoices {
			if c.value == choice {
				st, msg := storeResult(d, "pause lane", d.Store.PauseLane(r.Context(), site, d.now().Add(c.d)))
				return "Paused for " + c.label + ".", st, msg
			}
		}
		return "", http.StatusBadRequest, "Choose how long to pause from the list. The Lane was not paused."
	})
}

func handleResumeLane(d Deps) http.Handler {
	return laneControl(d, func(r *http.Request, site string) (string, int, string) {
		st, msg := storeResult(d, "resume lane", d.Store.ResumeLane(r.Context(), site))
		return "Resumed.", st, msg
	})
}

// until is a future stamp as the owner reads it: the clock time in UTC and
// how far off it is.
func until(now, t time.Time) string {
	t = t.UTC()
	return t.Format("2 Jan 15:04") + " UTC (in " + word.Age(t.Sub(now)) + ")"
}

// noticeView is one open notice as the Lanes page shows it, in the words of
// the notices command.
func noticeView(n notify.Notice, now time.Time) components.Notice {
	v := components.Notice{Kind: string(n.Kind), Subject: n.Kind.Subject(n.Site)}
	if n.Holds {
		v.Since = word.Age(now.Sub(n.Since))
	}
	switch {
	case !n.Pending():
		v.Sent = "sent " + word.Age(now.Sub(n.SentAt)) + " ago"
	case n.LastError != "":
		v.Sent, v.Pending = "pending — last attempt failed: "+n.LastError, true
	default:
		v.Sent, v.Pending = "pending — not attempted yet", true
	}
	return v
}
