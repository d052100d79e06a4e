package handlers

import (
	"net/http"
	"sync"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// laneView is one Lane's derived state (CONTEXT.md, Lane state) beside the
// row it was derived from: what a request for a Poll on it will meet.
type laneView struct {
	lane  store.AdminLane
	state laneState
}

// laneViews derives every Lane's state as the Lanes page does, from the
// same read, so a control, the Series page and a Reader's add never tell a
// Lane's state differently from its card.
func laneViews(d Deps, r *http.Request, now time.Time) (map[string]laneView, error) {
	read, err := readLanes(d, r, now)
	if err != nil {
		return nil, err
	}
	out := make(map[string]laneView, len(read.lanes))
	for _, l := range read.lanes {
		out[l.Site] = laneView{lane: l, state: laneStateOf(d, l, read.facts.on(l.Site), now)}
	}
	return out, nil
}

// laneViewOf is site's view; found is false for a Site with no Lane.
func laneViewOf(d Deps, r *http.Request, site string) (v laneView, found bool, err error) {
	views, err := laneViews(d, r, d.now())
	v, found = views[site]
	return v, found, err
}

// cannotPoll is the clause saying why no pass of the Lane will read
// anything until the owner acts, "" when a pass will (or will once the
// Lane recovers by itself). Only two states are the owner's to end: a
// browser Site on a server with no sidecar configured (SkipNoBrowser) and
// the owner's own Pause. A refusing Site, a sidecar that stopped answering,
// an unreachable Site, a stall and a Lane nobody leads each end without
// the owner's act, so a request on them is taken and says why it waits
// (waitsOn).
func (v laneView) cannotPoll() string {
	switch v.state.status {
	case laneNoSidecar:
		return v.lane.Site + " is not polled without a browser sidecar"
	case lanePaused:
		return "the " + v.lane.Site + " Lane is paused until " + v.state.until.Text + " (in " + v.state.until.In + "), by your own Pause"
	}
	return ""
}

// fix is the owner's step out of cannotPoll's state: the state's own Fix
// (word.SidecarSetup for no sidecar), or Resume for a Pause.
func (v laneView) fix() string {
	if v.state.status == lanePaused {
		return "Resume it on the Lanes page"
	}
	return v.state.fix
}

// refusal is the sentence refusing a Forced Poll or a Lane pass that no
// pass would serve, "" when the request may be queued.
func (v laneView) refusal() string {
	if v.cannotPoll() == "" {
		return ""
	}
	return v.why() + " Nothing was requested."
}

// why is cannotPoll as sentences, with the owner's step.
func (v laneView) why() string {
	return sentence(v.cannotPoll()) + " To poll it, " + v.fix() + "."
}

// pollable keeps the picks whose Lane a pass will serve (a bulk Poll now);
// held says, once per Site, why the others were not requested.
func pollable(d Deps, r *http.Request, picks []store.SeriesKey) (keep []store.SeriesKey, left int64, held []string, err error) {
	views, err := laneViews(d, r, d.now())
	if err != nil {
		return nil, 0, nil, err
	}
	said := map[string]bool{}
	for _, k := range picks {
		v, ok := views[k.Site]
		if !ok || v.cannotPoll() == "" {
			keep = append(keep, k)
			continue
		}
		left++
		if !said[k.Site] {
			said[k.Site] = true
			held = append(held, v.why())
		}
	}
	return keep, left, held, nil
}

// waitsOn says why a request already queued has not been served, "" when
// the Lane's next pass serves it. The Lane's card shows it beside the
// Lane's "To fix" lines; a page without them adds the step (waitsOnFix).
func (v laneView) waitsOn() string {
	st, site := v.state, v.lane.Site
	if why := v.cannotPoll(); why != "" {
		return "waiting: " + why
	}
	switch st.status {
	case laneUnled:
		return "waiting: no server leads the " + site + " Lane; one that runs takes it"
	case laneRefusing:
		if st.until != nil {
			return "waiting: " + site + " is refusing this server; the Lane tries again in " + st.until.In
		}
		return "waiting: " + site + " is refusing this server; the Lane tries again on its own"
	case laneBrowserDown:
		return "waiting: the " + word.SidecarSubject + " did not answer; the Lane tries again on its own"
	case laneUnreached:
		return "waiting: the last pass could not reach " + siteHost(site) + "; the next pass tries again"
	case laneStalled, laneStalling:
		return "waiting: the " + site + " Lane's passes have made no Poll lately (" + st.label + ")"
	}
	return ""
}

// waitsOnFix is waitsOn with the owner's step when only the owner ends
// the wait (cannotPoll, or no server leading the Lane): for the Series
// page, which shows no Lane's fixes.
func (v laneView) waitsOnFix() string {
	w := v.waitsOn()
	if v.cannotPoll() != "" || v.state.status == laneUnled {
		w += " — " + v.fix()
	}
	return w
}

// arrival is what a Reader is told about a Series just added on this
// Lane: when its title and chapters come, in plain words (a Reader sees no
// setting's name; the owner's page has the fix).
func (v laneView) arrival() string {
	site, st := v.lane.Site, v.state
	host := siteHost(site)
	unreached := !v.lane.UnreachedSince.IsZero() && v.lane.LastSkip == word.SkipNone
	switch {
	case st.status == laneNoSidecar:
		return site + " is not read on this server yet: the owner has not set up the browser it needs. The Bookmark is kept."
	case st.status == lanePaused:
		return "The owner has paused " + site + " on this server for " + st.until.In + "; the title and chapters arrive after that."
	case st.status == laneUnreached || unreached && (st.status == laneStalled || st.status == laneStalling):
		return "This server cannot reach " + host + " right now; the title and chapters arrive once it can."
	case st.status == laneRefusing:
		return host + " is turning this server away right now; the title and chapters arrive once it lets it in again."
	case st.status == laneBrowserDown, st.status == laneAdapterBroken:
		return "This server cannot read the pages of " + site + " right now; the title and chapters arrive once it can."
	case st.status == laneUnled, st.status == laneStalled, st.status == laneStalling:
		return "Polls of " + site + " are not running on this server right now; the title and chapters arrive once they do."
	}
	return arrivalHealthy
}

// arrivalHealthy is a healthy Lane's promise: a new Series is due at once
// (store.AddSeries writes its Forced Poll and wakes the Lane).
const arrivalHealthy = "Its title and chapters arrive with its first Poll, within a minute or so."

// arrivalUnknown is said when the Lanes could not be read: no promise of
// when.
const arrivalUnknown = "Its title and chapters arrive with its first Poll."

// arrivals is what the Readers of one request are told about the Series
// it added, per Site: the Lanes' states are read once, on first need (an
// import adds many entries, most of them Series already known).
type arrivals struct {
	once  sync.Once
	d     Deps
	views map[string]laneView
}

func newArrivals(d Deps) *arrivals { return &arrivals{d: d} }

// view is site's Lane, read with r's context; false when the Lanes could
// not be read (logged once).
func (a *arrivals) view(r *http.Request, site string) (laneView, bool) {
	a.once.Do(func() {
		views, err := laneViews(a.d, r, a.d.now())
		if err != nil {
			a.d.Logger.Warn("lane states not read for an add", "err", err)
			return
		}
		a.views = views
	})
	v, ok := a.views[site]
	return v, ok
}

// of is the Reader's sentence for a Series just added on site.
func (a *arrivals) of(r *http.Request, site string) string {
	if v, ok := a.view(r, site); ok {
		return v.arrival()
	}
	return arrivalUnknown
}

// forOwner is the owner's: a Poll on its way, or why none is and the step
// that brings one (laneView.why).
func (a *arrivals) forOwner(r *http.Request, site string) string {
	if v, ok := a.view(r, site); ok && v.cannotPoll() != "" {
		return "it is not polled yet. " + v.why()
	}
	return "a Poll is on its way."
}
