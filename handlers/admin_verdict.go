package handlers

import (
	"strconv"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// verdict is the landing's verdict (CONTEXT.md, Verdict line): what is not
// set up, the four conditions through the same derivation the push uses
// (Deps.Notices), and the faults younger than ownerWindow — the Series
// failing (young, a capped figure) and the runs still going. A server is
// Healthy only when none of the three has anything to say (issue 23, item 1).
func verdict(d Deps, nv notify.Verdict, y store.Young, now time.Time) components.Verdict {
	young := y.Series
	v := components.Verdict{Setup: setupSteps(d, nv, now)}
	// Without a sidecar the browser Lanes cannot reach one: the setup step
	// says so, with the step that fixes it, so sidecar-down is not said twice.
	noSidecar := !d.Sidecar && len(d.BrowserSites.Names()) > 0
	for _, c := range nv.Conditions {
		if c.Kind == word.SidecarDown && noSidecar {
			continue
		}
		v.Items = append(v.Items, components.VerdictItem{Kind: c.Kind, Site: c.Site, Age: word.Age(now.Sub(c.Since)),
			Href: notify.PagePath(c), Fix: c.Kind.Repair(c.Site)})
	}
	var early []string
	if young > 0 {
		early = append(early, countWords(young)+" Series failing")
	}
	lanes := 0
	// A Lane's reach and listing (admin_listing.go): past ownerWindow a
	// Lane fault, younger one of "too early to tell", unless a condition
	// holding on the Lane already says it. A Lane named for reaching
	// nothing is not named again for its young stall: that is the same
	// fault, and its age runs from the first request that reached nothing.
	named := map[string]bool{}
	for _, c := range nv.Conditions {
		named[c.Site] = true
	}
	for _, r := range y.Lanes {
		if named[r.Site] {
			continue
		}
		if text, fix, ok := laneFaultOf(d, r, now); ok {
			v.LaneFaults = append(v.LaneFaults, components.LaneFault{Site: r.Site, Text: text, Fix: fix,
				Href: "/admin/lanes#lane-" + r.Site})
			named[r.Site] = true
		} else if phrase, ok := laneEarlyOf(d, r, now); ok {
			early = append(early, phrase)
			lanes++
			named[r.Site] = true
		}
	}
	for _, c := range nv.Young {
		if (c.Kind == word.SidecarDown && noSidecar) || (c.Kind == word.Stall && named[c.Site]) {
			continue
		}
		early = append(early, youngPhrase(c, now))
		lanes++
	}
	if len(early) > 0 {
		// Past the cap the total reads "1001+", as the Series count does.
		v.Early = &components.Early{Total: countWords(young + int64(lanes)), Items: early}
	}
	return v
}

// setupSteps names what the server is not set up for, each with its step:
// owner notices off (or a webhook Discord no longer knows), and browser
// Sites with no sidecar to read them through.
func setupSteps(d Deps, nv notify.Verdict, now time.Time) []components.SetupStep {
	var out []components.SetupStep
	switch {
	case !nv.NoticesOn:
		out = append(out, components.SetupStep{Step: "webhook",
			Missing: "Owner notices are off: DISCORD_WEBHOOK_URL is not set, so no fault reaches you in Discord.",
			Fix:     "set DISCORD_WEBHOOK_URL to a Discord channel's webhook address and restart the server"})
	case !nv.WebhookDeadAt.IsZero():
		out = append(out, components.SetupStep{Step: "webhook-dead",
			Missing: "Discord answered “Unknown Webhook” " + ago(now, nv.WebhookDeadAt) + ": owner notices cannot be delivered.",
			Fix:     "set DISCORD_WEBHOOK_URL to a working webhook and restart the server"})
	}
	if sites := d.BrowserSites.Names(); len(sites) > 0 && !d.Sidecar {
		verb := "are"
		if len(sites) == 1 {
			verb = "is"
		}
		out = append(out, components.SetupStep{Step: "sidecar",
			Missing: andList(sites) + " " + verb + " read through a browser, and BROWSER_WS_URL names none, so they are not polled.",
			Fix:     word.SidecarSetup})
	}
	return out
}

// youngPhrase names a run still going, younger than ownerWindow, with its
// age. A plain Lane reaching nothing is named from its reach instead
// (laneEarlyOf), so its stall is not said twice.
func youngPhrase(c notify.Condition, now time.Time) string {
	age := since(now, c.Since)
	switch c.Kind {
	case word.Stall:
		return "the " + c.Site + " Lane owing Polls and making none for " + age
	case word.NoBrowserRoute:
		return c.Site + " refusing every Poll for " + age
	case word.SidecarDown:
		return "no browser Lane reaching the " + word.SidecarSubject + " for " + age
	}
	return c.Kind.Subject(c.Site) + ": " + string(c.Kind) + " for " + age
}

// andList joins names as a sentence does: "a", "a and b", "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// countWords is a capped count as the figures print it: "1000+" above the cap.
func countWords(n int64) string {
	n, over := figure(n)
	if over {
		return strconv.FormatInt(n, 10) + "+"
	}
	return strconv.FormatInt(n, 10)
}
