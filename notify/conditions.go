package notify

import (
	"context"
	"fmt"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// DefaultLookback bounds every pass-log scan. It must exceed the window; a
// run older than it reads as starting at the lookback's edge.
const DefaultLookback = 7 * 24 * time.Hour

// Condition is one of the four holding now. Site is "" for word.SidecarDown.
// Since is when the fault began (see the age derivations below); it has
// held past the window by construction.
type Condition struct {
	Kind  word.NoticeKind
	Site  string
	Since time.Time
}

// Age is how long the condition has held at now.
func (c Condition) Age(now time.Time) time.Duration { return now.Sub(c.Since) }

// How each condition's age is derived (CONTEXT.md, the owner-notice derivations; W is the
// window, now the pass time). The message, the verdict line and the notices
// command all read these through derive, so they cannot disagree.
//
//   - A Lane's passes, ordered by started_at, form runs of passes of the same
//     kind. A run-based condition holds when the Lane's newest pass at or
//     before now belongs to a run of its kind whose first pass started more
//     than W before now; its age is now minus that first pass. Any pass of
//     another kind (a paused pass, one with nothing due, one that read a
//     page) ends the run. Passes skipped "not-leader" are another replica
//     declining the Lane and are ignored.
//   - stall(site): the kind is due > 0 AND checked = 0 AND skip = '' AND
//     refused = 0.
//   - no-browser-route(site), only for a Site with no browser route: the
//     kind is "refusing": skip = 'refusing', or skip = '' with refused > 0
//     and nothing read (ok = no_chapter = not_found = 0). A refusing pass is
//     never a stall pass (refused = 0 there), so a Site that refuses sends
//     only no-browser-route.
//   - sidecar-down (site ""): all browser Lanes' passes together. A pass
//     fails to reach the sidecar when skip is 'browser-down' or
//     'no-browser', or skip = '' with unreachable > 0 and no outcome that
//     fetched (ok, no_chapter, not_found, errors, refused all 0); it reaches
//     the sidecar when skip = '' and some Poll ended other than unreachable
//     or unfetchable. Other passes are ignored. It holds when a failure
//     follows the last pass that reached the sidecar, and the first such
//     failure started more than W ago; that failure is the age.
//   - adapter-broken(site): over the Site's Series that are not Finished and
//     have an address (N of them), count those holding a no_chapter failure
//     row with failing_since <= now - W (F). It holds when 2F > N; exactly
//     half does not. Its age runs from the failing_since of the m-th oldest
//     such row, m = floor(N/2) + 1: the moment more than half of the Site
//     had started failing that way.
//
// Every run scan looks back no further than the lookback (7 days by
// default), so an age beyond it is reported as the lookback.

// subject is one (kind, site) a Lane's pass is responsible for.
type subject struct {
	kind word.NoticeKind
	site string
}

// subjectsFor lists what a pass of site evaluates: its stall, its
// no-browser-route, the shared sidecar-down if it is a browser Site, and its
// adapter-broken. no-browser-route never holds for a browser Site, but a
// browser Site's pass still evaluates it so that the notice closes once the
// repair (giving the Site a browser route) is deployed; likewise any Lane
// closes sidecar-down when no Site has a browser route any more.
func (n *Notifier) subjectsFor(site string) []subject {
	out := []subject{{word.Stall, site}, {word.NoBrowserRoute, site}}
	if n.browser.Has(word.Site(site)) || len(n.browserList) == 0 {
		out = append(out, subject{word.SidecarDown, ""})
	}
	return append(out, subject{word.AdapterBroken, site})
}

// allSubjects lists everything that can hold, in verdict-line order.
func (n *Notifier) allSubjects() []subject {
	var out []subject
	for _, k := range word.NoticeKinds {
		if k == word.SidecarDown {
			if len(n.browserList) > 0 {
				out = append(out, subject{word.SidecarDown, ""})
			}
			continue
		}
		for _, site := range word.SiteNames() {
			if k == word.NoBrowserRoute && n.browser.Has(word.Site(site)) {
				continue
			}
			out = append(out, subject{k, site})
		}
	}
	return out
}

// derive evaluates one subject at now. When it does not hold but a run of
// its passes is still going, younger than the window, the Condition it
// returns carries that run's start in Since (and false); otherwise Since is
// zero.
func (n *Notifier) derive(ctx context.Context, s subject, now time.Time) (Condition, bool, error) {
	from := now.Add(-n.lookback)
	cutoff := now.Add(-n.window)
	var since time.Time
	var ok bool
	var err error
	switch s.kind {
	case word.Stall:
		since, ok, err = n.store.StallRun(ctx, s.site, now, from)
	case word.NoBrowserRoute:
		if n.browser.Has(word.Site(s.site)) {
			return Condition{}, false, nil
		}
		since, ok, err = n.store.RefusingRun(ctx, s.site, now, from)
	case word.SidecarDown:
		since, ok, err = n.store.SidecarDownRun(ctx, n.browserList, now, from)
	case word.AdapterBroken:
		// The cutoff is inside the count; the share is past half at since.
		since, ok, err = n.store.AdapterBroken(ctx, s.site, cutoff)
		if err != nil || !ok {
			return Condition{}, false, err
		}
		return Condition{Kind: s.kind, Site: s.site, Since: since}, true, nil
	default:
		return Condition{}, false, fmt.Errorf("notify: unknown condition %q", s.kind)
	}
	if err != nil || !ok {
		return Condition{}, false, err
	}
	c := Condition{Kind: s.kind, Site: s.site, Since: since}
	// A run must have started more than W before now.
	return c, since.Before(cutoff), nil
}

// Conditions returns every condition holding at now: every Site's in one
// statement (store.ConditionsQuery), built from the same expressions derive
// runs one at a time.
func (n *Notifier) Conditions(ctx context.Context, now time.Time) ([]Condition, error) {
	b := n.store.NewBatch()
	finish := n.queueConditions(b, now)
	if err := n.store.Send(ctx, b); err != nil {
		return nil, fmt.Errorf("notify: conditions: %w", err)
	}
	held, _ := finish()
	return held, nil
}

// Verdict is what the landing page's verdict line reads.
type Verdict struct {
	Conditions []Condition
	// Young are the runs still going that began less than the window ago:
	// a stall, a refusing Site or an unreachable sidecar that is not a
	// condition yet (the verdict's "too early to tell"). adapter-broken has
	// no run: its young share is the Series failing, which the landing
	// counts itself.
	Young []Condition
	// NoticesOn: DISCORD_WEBHOOK_URL is set, so a condition is pushed.
	NoticesOn bool
	// WebhookDeadAt is when Discord answered 404 for the configured webhook;
	// zero while it works or when none is configured.
	WebhookDeadAt time.Time
}

// QueueVerdict queues the verdict line's reads into b (the conditions'
// one statement and the webhook's state), so the landing page sends them
// with its figures in one round trip. finish reads them once b is sent.
func (n *Notifier) QueueVerdict(b *store.Batch, now time.Time) (finish func() Verdict) {
	conds := n.queueConditions(b, now)
	var dead time.Time
	if n.Enabled() {
		b.WebhookDeadAt(n.hook.hash, &dead)
	}
	return func() Verdict {
		held, young := conds()
		return Verdict{Conditions: held, Young: young, NoticesOn: n.Enabled(), WebhookDeadAt: dead}
	}
}

func (n *Notifier) queueConditions(b *store.Batch, now time.Time) func() (held, young []Condition) {
	q := store.ConditionsQuery{Sites: word.SiteNames(), BrowserSites: n.browserList, Now: now, From: now.Add(-n.lookback)}
	for _, site := range q.Sites {
		if !n.browser.Has(word.Site(site)) {
			q.RefusalSites = append(q.RefusalSites, site)
		}
	}
	var rows []store.SiteConditions
	b.Conditions(q, &rows)
	return func() ([]Condition, []Condition) { return n.holding(rows, now) }
}

// holding reads the rows of store.ConditionsQuery as derive reads each
// subject: a run holds once it began more than the window before now, the
// adapter-broken share once its moment is at least the window old. A run
// still going that began later is young. The order is allSubjects' (the
// verdict line's).
func (n *Notifier) holding(rows []store.SiteConditions, now time.Time) (out, young []Condition) {
	cutoff := now.Add(-n.window)
	bySite := map[string]store.SiteConditions{}
	for _, r := range rows {
		bySite[r.Site] = r
	}
	add := func(k word.NoticeKind, site string, since time.Time, holds bool) {
		switch {
		case since.IsZero():
		case holds:
			out = append(out, Condition{Kind: k, Site: site, Since: since})
		case k != word.AdapterBroken:
			young = append(young, Condition{Kind: k, Site: site, Since: since})
		}
	}
	for _, s := range n.allSubjects() {
		r := bySite[s.site]
		switch s.kind {
		case word.Stall:
			add(s.kind, s.site, r.StallSince, r.StallSince.Before(cutoff))
		case word.NoBrowserRoute:
			add(s.kind, s.site, r.RefusingSince, r.RefusingSince.Before(cutoff))
		case word.AdapterBroken:
			add(s.kind, s.site, r.BrokenSince, !r.BrokenSince.After(cutoff))
		case word.SidecarDown:
			if len(rows) > 0 {
				r = rows[0]
			}
			add(s.kind, "", r.SidecarSince, r.SidecarSince.Before(cutoff))
		}
	}
	return out, young
}
