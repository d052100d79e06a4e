package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
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

// laneFacts is what a Lane's row reads besides its own row: the conditions
// on it, holding or young, and whether its failing list has anything.
type laneFacts struct {
	conds   map[string]laneConditions
	failing map[string]bool
}

// on is site's conditions, made on first use.
func (f laneFacts) on(site string) laneConditions {
	c, ok := f.conds[site]
	if !ok {
		c = laneConditions{held: map[word.NoticeKind]notify.Condition{}, young: map[word.NoticeKind]notify.Condition{}}
		f.conds[site] = c
	}
	return c
}

// lanesRead is everything the Lanes page reads: every Lane, the facts their
// rows show, and the state of the owner notices.
type lanesRead struct {
	lanes  []store.AdminLane
	facts  laneFacts
	status notify.Status
	fresh  map[string]store.Freshness
	strips map[string]store.PassStrip
	// The Reader announcements of the last day, per channel, and when the
	// Readers' webhook answered 404 (on each row).
	delivery []store.ChannelDelivery
}

// readLanes reads it in one round trip (the reads are independent): the
// Lanes, the failing lists by one bounded statement, and the conditions,
// the webhook's state and the open notices through the same derivation the
// push uses.
func readLanes(d Deps, r *http.Request, now time.Time) (lanesRead, error) {
	out := lanesRead{facts: laneFacts{conds: map[string]laneConditions{}, failing: map[string]bool{}}, fresh: map[string]store.Freshness{},
		strips: map[string]store.PassStrip{}}
	b := d.Store.NewBatch()
	b.AdminLanes(now, &out.lanes)
	b.Freshness(word.SiteNames(), now, out.fresh)
	b.PassStrips(word.SiteNames(), now, out.strips)
	b.FailingSites(word.SiteNames(), now, out.facts.failing)
	b.DeliveryCounts(now.Add(-24*time.Hour), d.ReadersWebhookHash, &out.delivery)
	var finish func() (notify.Verdict, notify.Status)
	if d.Notices != nil {
		finish = d.Notices.QueueStatus(b, now)
	}
	if err := d.Store.Send(r.Context(), b); err != nil || finish == nil {
		return out, err
	}
	verdict, status := finish()
	out.status = status
	// sidecar-down is the browser Lanes' together: each of them carries it.
	sites := func(c notify.Condition) []string {
		if c.Kind == word.SidecarDown {
			return d.BrowserSites.Names()
		}
		return []string{c.Site}
	}
	for _, c := range verdict.Conditions {
		for _, site := range sites(c) {
			out.facts.on(site).held[c.Kind] = c
		}
	}
	for _, c := range verdict.Young {
		for _, site := range sites(c) {
			out.facts.on(site).young[c.Kind] = c
		}
	}
	return out, nil
}

// laneRowOf builds one Lane's row.
func laneRowOf(d Deps, l store.AdminLane, read lanesRead, now time.Time) components.LaneRow {
	facts := read.facts
	conds := facts.on(l.Site)
	st := laneStateOf(d, l, conds, now)
	row := components.LaneRow{
		Site: l.Site, Base: "/admin/lanes/" + url.PathEscape(l.Site), Route: word.RoutePlain, Passes: l.Passes,
		State: st.label, StateUntil: st.until, StateNote: st.note, StateFault: st.fault,
		Paused: st.status == lanePaused, Fixes: fixesOf(st, conds),
	}
	for _, o := range word.Outcomes {
		row.Counts = append(row.Counts, components.LaneCount{Word: o, Plain: o.PlainOn(routeOf(d.browserSite(l.Site))), N: l.Of(o)})
	}
	if facts.failing[l.Site] {
		// Navigation, not attached to a number: one link per Site, shown
		// only when its list has something to open.
		row.FailingHref = listHref(store.FilterFailing, l.Site, "", "", "")
	}
	if c, ok := conds.held[word.AdapterBroken]; ok {
		// The list the adapter-broken notice links to: exactly the Series
		// it counted, most of which the failing list may not hold.
		row.NoChapterHref = notify.PagePath(c)
	}
	if d.browserSite(l.Site) {
		row.Route = word.RouteBrowser
	}
	row.Listing, row.ListingCost, row.ListingBroken = listingState(d, l, now)
	row.Freshness = freshnessOf(read.fresh[l.Site], now)
	row.Strip = passStripOf(read.strips[l.Site], l.Site, d.browserSite(l.Site))
	row.Problem = row.StateFault || row.ListingBroken != "" || len(row.Fixes) > 0
	if l.LastStartedAt.IsZero() {
		row.LastPass, row.Never = "never", true
	} else {
		// One pass's figures: its Polls counted every outcome, and "answered"
		// only those the Site answered (the pass log's checked), so a pass
		// whose reads failed before an answer never reads "1 due, 0 checked"
		// beside an error it counted (issue 23, item 6).
		row.LastPass = fmt.Sprintf("%s: %s due, %d polled, %d answered",
			ago(now, l.LastStartedAt), dueFigure(l.LastDue), l.LastPolled, l.LastChecked)
		if l.LastSkip != word.SkipNone {
			// A skipped pass checks nothing: its counts would read 0 and 0.
			row.LastPass = fmt.Sprintf("%s: skipped (%s)", ago(now, l.LastStartedAt), l.LastSkip)
		}
	}
	switch {
	case !l.ForcePollAt.IsZero() && l.ForcePollAt.After(l.LastStartedAt):
		// Asked again only while a pass may serve it (laneView.cannotPoll).
		v := laneView{lane: l, state: st}
		row.ForcePending, row.ForceWaits = ago(now, l.ForcePollAt), v.waitsOn()
		if v.cannotPoll() == "" {
			row.Live = row.Base + "?was=force"
		}
	case row.Paused && !l.PauseServed:
		// The Pause is written; the Lane has not yet run the pass that
		// honours it (its current pass finishes first).
		row.StateNote = "Pause requested: the Lane stops once its current pass ends."
		row.Live = row.Base + "?was=pause"
	}
	return row
}

// handleAdminLaneRow is one Lane's row, asked again by the row itself while
// a Forced Poll or a Pause waits; once served, it says what happened.
func handleAdminLaneRow(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site := urlParam(r, "site")
		if !word.KnownSite(site) {
			fail(w, r, d.Logger, http.StatusNotFound, "There is no such Lane.")
			return
		}
		if !wantsFragment(r) {
			http.Redirect(w, r, "/admin/lanes", http.StatusSeeOther)
			return
		}
		row, ok := laneOrFail(w, r, d, site)
		if !ok {
			return
		}
		if row.Live == "" {
			switch r.URL.Query().Get("was") {
			case "force":
				row.Message, row.Served = "The requested pass ran. Last pass: "+row.LastPass+".", true
			case "pause":
				row.Message, row.Served = "Paused: the Lane's last pass stopped at the Pause.", true
			}
		}
		render(w, r, d.Logger, http.StatusOK, components.LaneRowView(row, pauseOptions(), word.Age(word.OwnerWindow)))
	})
}

// laneOrFail is one Lane's row, or false once it has answered the failure:
// the database's, or 404 for a Lane that is not there.
func laneOrFail(w http.ResponseWriter, r *http.Request, d Deps, site string) (components.LaneRow, bool) {
	row, found, err := oneLane(d, r, site, d.now())
	switch {
	case err != nil:
		failStore(w, r, d.Logger, err, "The Lane could not be read. Try again.", "admin lanes")
		return row, false
	case !found:
		fail(w, r, d.Logger, http.StatusNotFound, "There is no such Lane.")
		return row, false
	}
	return row, true
}

// oneLane reads the Lanes page's facts and builds site's row; found is
// false when the database holds no such Lane.
func oneLane(d Deps, r *http.Request, site string, now time.Time) (row components.LaneRow, found bool, err error) {
	read, err := readLanes(d, r, now)
	if err != nil {
		return row, false, err
	}
	for _, l := range read.lanes {
		if l.Site == site {
			return laneRowOf(d, l, read, now), true, nil
		}
	}
	return row, false, nil
}

// lanesPage reads and builds /admin/lanes: problem Lanes first, then the
// rest in Site order. mark, when set, adjusts the rows (a control's refusal
// shown without JavaScript).
func lanesPage(d Deps, r *http.Request, now time.Time, mark func(*components.LaneRow)) (components.LanesPage, error) {
	read, err := readLanes(d, r, now)
	if err != nil {
		return components.LanesPage{}, err
	}
	p := components.LanesPage{Window: word.Age(word.OwnerWindow), Pauses: pauseOptions()}
	for _, l := range read.lanes {
		row := laneRowOf(d, l, read, now)
		if mark != nil {
			mark(&row)
		}
		p.Lanes = append(p.Lanes, row)
	}
	slices.SortStableFunc(p.Lanes, func(a, b components.LaneRow) int {
		switch {
		case a.Problem == b.Problem:
			return 0
		case a.Problem:
			return -1
		}
		return 1
	})
	status := read.status
	p.NoticesOff = !status.Enabled
	if !status.WebhookDeadAt.IsZero() {
		p.WebhookDead = word.Age(now.Sub(status.WebhookDeadAt))
	}
	for _, n := range status.Notices {
		p.Notices = append(p.Notices, noticeView(n, now))
	}
	p.Announcements = announcementsView(d, read, now)
	return p, nil
}

// announcementsView is the Reader announcements' line: each channel's sent
// and failed in the last day, and the Discord channel's state.
func announcementsView(d Deps, read lanesRead, now time.Time) components.AnnouncementsView {
	v := components.AnnouncementsView{DiscordOff: d.ReadersWebhookHash == ""}
	var counts, unknown []string
	for _, c := range read.delivery {
		if c.Sent+c.Failed+c.Unknown > 0 {
			counts = append(counts, fmt.Sprintf("%s %d sent · %d failed", c.Channel, c.Sent, c.Failed))
		}
		// Sent with no answer: counted apart, as ADR 0017 says.
		if c.Unknown > 0 {
			unknown = append(unknown, fmt.Sprintf("%s %d", c.Channel, c.Unknown))
		}
		if !c.ReadersDeadAt.IsZero() && d.ReadersWebhookHash != "" {
			v.DiscordDead = word.Age(now.Sub(c.ReadersDeadAt))
		}
	}
	v.Counts = strings.Join(counts, "; ")
	v.MayNotHaveArrived = strings.Join(unknown, "; ")
	return v
}

// handleAdminLanes is /admin/lanes.
func handleAdminLanes(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := lanesPage(d, r, d.now(), nil)
		if err != nil {
			failStore(w, r, d.Logger, err, "The Lanes could not be read. Try again.", "admin lanes")
			return
		}
		render(w, r, d.Logger, http.StatusOK, components.AdminLanesPage(viewerFrom(r.Context()), p))
	})
}

// laneControl parses, lets act write, then answers htmx with the Lane's
// row and a plain browser with a 303 to the Lanes page.
func laneControl(d Deps, act func(r *http.Request, site string) controlResult) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, maxFormBody) {
			return
		}
		site := urlParam(r, "site")
		if !word.KnownSite(site) {
			fail(w, r, d.Logger, http.StatusNotFound, "There is no such Lane.")
			return
		}
		res := act(r, site)
		status := res.status
		switch {
		case status == http.StatusNotFound:
			fail(w, r, d.Logger, status, "There is no such Lane.")
			return
		case status >= 500:
			fail(w, r, d.Logger, status, res.refusal)
			return
		case status == 0 && !wantsFragment(r):
			http.Redirect(w, r, "/admin/lanes", http.StatusSeeOther)
			return
		}
		say := func(row *components.LaneRow) {
			row.Message, row.Fault = res.done, false
			if res.refusal != "" {
				row.Message, row.Fault = res.refusal, true
			}
		}
		if status == 0 {
			status = http.StatusOK
		}
		if !wantsFragment(r) {
			// A refusal without JavaScript: the whole page, the message on
			// its row, and the notices as the page always shows them.
			p, err := lanesPage(d, r, d.now(), func(o *components.LaneRow) {
				if o.Site == site {
					say(o)
				}
			})
			if err != nil {
				failStore(w, r, d.Logger, err, "The Lanes could not be read. Try again.", "admin lanes")
				return
			}
			render(w, r, d.Logger, status, components.AdminLanesPage(viewerFrom(r.Context()), p))
			return
		}
		row, ok := laneOrFail(w, r, d, site)
		if !ok {
			return
		}
		say(&row)
		render(w, r, d.Logger, status, components.LaneRowView(row, pauseOptions(), word.Age(word.OwnerWindow)))
	})
}

func handleForceLanePoll(d Deps) http.Handler {
	return laneControl(d, func(r *http.Request, site string) controlResult {
		if no, ok := refusePoll(d, r, site); !ok {
			return no
		}
		return storeResult(d, "force lane", d.Store.ForceLanePoll(r.Context(), site, d.now()), "Pass requested.")
	})
}

func handlePauseLane(d Deps) http.Handler {
	return laneControl(d, func(r *http.Request, site string) controlResult {
		choice := r.PostForm.Get("for")
		for _, c := range pauseChoices {
			if c.value == choice {
				return storeResult(d, "pause lane", d.Store.PauseLane(r.Context(), site, d.now().Add(c.d), d.now()), "Paused for "+c.label+".")
			}
		}
		return controlResult{status: http.StatusBadRequest, refusal: "Choose how long to pause from the list. The Lane was not paused."}
	})
}

func handleResumeLane(d Deps) http.Handler {
	return laneControl(d, func(r *http.Request, site string) controlResult {
		return storeResult(d, "resume lane", d.Store.ResumeLane(r.Context(), site), "Resumed.")
	})
}

// stamp is a future moment as the owner reads it: the clock time in the
// owner's zone (Deps.when) and how far off it is.
func stamp(d Deps, now, t time.Time) *components.Stamp {
	s := d.when(t)
	s.In = word.Age(t.Sub(now))
	return &s
}

// noticeView is one open notice as the Lanes page shows it, in the words of
// the notices command.
func noticeView(n notify.Notice, now time.Time) components.Notice {
	v := components.Notice{Kind: string(n.Kind), Subject: n.Kind.Subject(n.Site), Fix: n.Kind.Repair(n.Site)}
	if n.Holds {
		v.Since = word.Age(now.Sub(n.Since))
	}
	switch {
	case n.MayNotHaveArrived:
		v.Sent, v.MayNotHaveArrived = "sent "+word.Ago(now.Sub(n.SentAt))+"; may not have arrived: no answer came ("+n.LastError+"); not sent again", true
	case !n.Pending():
		v.Sent = "sent " + word.Ago(now.Sub(n.SentAt))
	case n.LastError != "":
		v.Sent, v.Pending = "pending — last attempt failed: "+n.LastError, true
	default:
		v.Sent, v.Pending = "pending — not attempted yet", true
	}
	return v
}

// dueFigure is a pass's due as the Lanes page writes it: what it owed at its
// start, counted up to store.DueCap, and "1000+" above it.
func dueFigure(n int64) string {
	if n > store.DueCap {
		return strconv.Itoa(store.DueCap) + "+"
	}
	return strconv.FormatInt(n, 10)
}
