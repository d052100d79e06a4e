package handlers

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// laneStatus is a Lane's one state on the Lanes page. It is derived once,
// from the Lane's row, the conditions holding on it and the runs still
// going, so the label, what it means and its fix never disagree: a Lane the
// stall condition names is "stalled", never "running" beside a stall's fix
// (issue 23, item 6).
type laneStatus int

// The states, in the order laneStateOf tries them: the first that holds is
// the Lane's.
const (
	laneRunning       laneStatus = iota
	laneUnled                    // no process holds its lease (ADR 0018)
	lanePaused                   // the owner's Pause: never a fault
	laneStalled                  // the stall condition holds
	laneRefusing                 // refuse_until ahead, or no-browser-route holds
	laneNoSidecar                // a browser Site and no BROWSER_WS_URL
	laneBrowserDown              // the sidecar did not answer, or sidecar-down holds
	laneAdapterBroken            // the adapter-broken condition holds
	laneUnreached                // a plain Lane's last pass reached nothing: our network, most often
	laneStalling                 // a run of stall passes younger than ownerWindow
)

// laneState is a status in the page's words: its label, the end of a Pause
// or a Refusal, what it means, and the one repair clause ("" for none).
type laneState struct {
	status laneStatus
	label  string
	until  *components.Stamp
	note   string
	fix    string
	fault  bool
}

// laneConditions are the conditions on one Lane: those holding, and the
// runs still going that began less than ownerWindow ago, by kind.
type laneConditions struct {
	held, young map[word.NoticeKind]notify.Condition
}

// laneStateOf derives the Lane's state.
func laneStateOf(d Deps, l store.AdminLane, c laneConditions, now time.Time) laneState {
	browser := d.browserSite(l.Site)
	stall, stalled := c.held[word.Stall]
	_, refusingHeld := c.held[word.NoBrowserRoute]
	_, sidecarHeld := c.held[word.SidecarDown]
	broken, adapterBroken := c.held[word.AdapterBroken]
	youngStall, stalling := c.young[word.Stall]
	switch {
	case !l.UnledSince.IsZero():
		// No process holds the Lane's lease (ADR 0018): nothing polls it,
		// and no pass is written to say so.
		return laneState{status: laneUnled, label: "nobody leads this Lane", fault: true,
			note: fmt.Sprintf("No server has led this Lane for %s, longer than its pace (%s): nothing polls it.",
				since(now, l.UnledSince), word.Age(time.Duration(l.UnledPaceS)*time.Second)),
			fix: "make sure a server is running and can reach the database"}
	case l.PausedUntil.After(now):
		return laneState{status: lanePaused, label: "paused until", until: stamp(d, now, l.PausedUntil),
			note: "Your own Pause: no Poll of this Site until then. Resume to poll it now."}
	case stalled:
		return laneState{status: laneStalled, label: "stalled", fault: true,
			note: sentence(word.Stall.Fault(l.Site, since(now, stall.Since))), fix: word.Stall.Repair(l.Site)}
	case l.RefuseUntil.After(now) || refusingHeld:
		return refusingState(d, l, browser, refusingHeld, now)
	case l.LastSkip == word.SkipNoBrowser || (browser && !d.Sidecar):
		// This server's own setting says so before its first pass has: the
		// fact /admin's setup step reads (Deps.Sidecar).
		return laneState{status: laneNoSidecar, label: "browser down: no sidecar configured", fault: true,
			note: "BROWSER_WS_URL is not set, so this browser Site is not polled.", fix: word.SidecarSetup}
	case l.LastSkip == word.SkipBrowserDown || (browser && sidecarHeld):
		return laneState{status: laneBrowserDown, label: "browser down", fault: true,
			note: "The browser sidecar did not answer; browser Lanes wait, then try again.", fix: word.SidecarDown.Repair("")}
	case adapterBroken:
		return laneState{status: laneAdapterBroken, label: "adapter broken", fault: true,
			note: sentence(word.AdapterBroken.Fault(l.Site, since(now, broken.Since))), fix: word.AdapterBroken.Repair(l.Site)}
	case unreachedOK(d, l):
		// The plain route's unreachable: our network, most often (docs/adr/0022).
		// Its age runs from the first pass that reached nothing, listing
		// pages included, across restarts (migration 0034).
		return laneState{status: laneUnreached, label: "cannot reach the Site", fault: true,
			note: "For " + since(now, unreachedAt(d, l)) + " every request to " + siteHost(l.Site) +
				", Polls and listing alike, has reached nothing (its name did not resolve, the connection was refused, or TLS failed). No Series was marked failing.",
			fix: networkFix(l.Site)}
	case stalling:
		return laneState{status: laneStalling, label: "stalling", fault: true,
			note: fmt.Sprintf("For %s its passes have owed Polls and the Site has answered none; past %s it is a stall.",
				since(now, youngStall.Since), word.Age(word.OwnerWindow)),
			fix: word.Stall.Repair(l.Site)}
	}
	return laneState{status: laneRunning, label: "running"}
}

// refusingState is a Lane the Site answers with challenges: until when, and
// once no-browser-route holds, its repair as the fix; before that, a plain
// Site's note says what the fix will be.
func refusingState(d Deps, l store.AdminLane, browser, held bool, now time.Time) laneState {
	s := laneState{status: laneRefusing, label: "refusing", fault: true,
		note: "The Site answered with challenges instead of pages, so the Lane waits and then tries again. " +
			"A Refusal says nothing about any Series."}
	if l.RefuseUntil.After(now) {
		s.label, s.until = "refusing until", stamp(d, now, l.RefuseUntil)
	}
	switch {
	case held:
		s.fix = word.NoBrowserRoute.Repair(l.Site)
	case !browser:
		s.note += fmt.Sprintf(" If it lasts over %s it becomes a fault; to fix it, %s.", word.Age(word.OwnerWindow), word.NoBrowserRoute.Repair(l.Site))
	}
	return s
}

// fixesOf is the Lane's "To fix" lines: the state's repair first, then that
// of every other condition holding on it, each sentence once.
func fixesOf(st laneState, c laneConditions) []string {
	var out []string
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	add(st.fix)
	for _, k := range word.NoticeKinds {
		if k == word.SidecarDown && st.status == laneNoSidecar {
			// Its setup step is this condition's repair, said for a server
			// that never had a sidecar.
			continue
		}
		if c, ok := c.held[k]; ok {
			add(k.Repair(c.Site))
		}
	}
	return out
}

// sentence is a clause as a sentence: its first letter upper case (a Site's
// name opening it keeps its own) and a full stop.
func sentence(clause string) string {
	if clause == "" {
		return ""
	}
	if !slices.Contains(word.SiteNames(), strings.SplitN(clause, " ", 2)[0]) {
		clause = strings.ToUpper(clause[:1]) + clause[1:]
	}
	return clause + "."
}

// unreachedOK and unreachedAt are the Lane's reach (admin_listing.go).
func unreachedOK(d Deps, l store.AdminLane) bool { _, ok := unreached(d, reachOf(l)); return ok }
func unreachedAt(d Deps, l store.AdminLane) time.Time {
	at, _ := unreached(d, reachOf(l))
	return at
}
