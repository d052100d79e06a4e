package handlers_test

import (
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// A pending Forced Poll of a Series keeps asking (htmx polling on its one
// section) and stops once served, then says what the Poll found and brings
// the new fact line along.
func TestAPendingSeriesPollAsksAgainUntilServedThenShowsTheResult(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(dataset)
	c := h.owner()
	base := "/admin/series/asurascans/failing-1h"
	live := h.post(c, base+"/poll", nil, "HX-Request", "true").testid("poll-state")
	if live.AttrOr("hx-trigger", "") != "every 2s" || live.AttrOr("hx-get", "") != base+"/poll-state?was=pending" {
		t.Fatalf("a pending Poll does not ask again: %v", live.Nodes[0].Attr)
	}
	again := h.get(c, base+"/poll-state?was=pending", "HX-Request", "true")
	if again.testid("poll-state").AttrOr("hx-trigger", "") != "every 2s" || again.testid("poll-served").Length() != 0 {
		t.Errorf("an unserved Poll stopped asking or claims it was served")
	}
	// A read starts: its check stamp passes the request, but nothing is read
	// yet. The old failure still stands, so "served" here would be a lie.
	h.exec(`UPDATE series SET checked_at = force_poll_at + interval '1 millisecond' WHERE series_id = 'failing-1h'`)
	inFlight := h.get(c, base+"/poll-state?was=pending", "HX-Request", "true")
	if inFlight.testid("poll-state").AttrOr("hx-trigger", "") != "every 2s" || inFlight.testid("poll-served").Length() != 0 {
		t.Errorf("a Poll whose read has only started claims it was served: %q", squash(inFlight.testid("poll-state").Text()))
	}
	// The read finishes: the failure is gone and the Lane clears the request.
	h.exec(`DELETE FROM poll_failures WHERE series_id = 'failing-1h'`)
	h.exec(`UPDATE series SET force_poll_at = NULL WHERE series_id = 'failing-1h'`)
	done := h.get(c, base+"/poll-state?was=pending", "HX-Request", "true")
	if _, asks := done.testid("poll-state").Attr("hx-trigger"); asks {
		t.Errorf("a served Poll keeps asking")
	}
	if got := squash(done.testid("poll-served").Text()); !strings.Contains(got, "served") || !strings.Contains(got, "read") {
		t.Errorf("served message %q", got)
	}
	fact := done.find(`#detail-fact[hx-swap-oob="true"] [data-testid="fact-line"]`)
	if fact.Length() != 1 || fact.Find(`[data-testid="failure-marker"]`).Length() != 0 {
		t.Errorf("the fact line is not brought up to date out of band")
	}
	if h.get(c, base+"/poll-state").status != 303 {
		t.Errorf("a plain browser is not sent to the page")
	}
}

// A Lane's Forced Poll and a Pause ask again on their row until the Lane has
// run the pass that serves them.
func TestAPendingLanePollOrPauseAsksAgainUntilTheLaneServesIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.owner()
	row := func(a answer) (trigger, get string) {
		r := a.find(`[data-testid="lane-row"][data-site="comix"]`)
		return r.AttrOr("hx-trigger", ""), r.AttrOr("hx-get", "")
	}
	tr, get := row(h.post(c, "/admin/lanes/comix/poll", nil, "HX-Request", "true"))
	if tr != "every 2s" || get != "/admin/lanes/comix?was=force" {
		t.Fatalf("a pending Lane Poll does not ask again: %q %q", tr, get)
	}
	// The Lane's next pass serves it (a pass after the request).
	storetest.Insert(t, h.pool, storetest.Pass{Site: word.Comix, StartedAt: t0.Add(time.Second), Due: 4, Checked: 4, Counts: word.Counts{OK: 4}})
	served := h.get(c, get, "HX-Request", "true")
	if tr, _ := row(served); tr != "" {
		t.Errorf("a served Lane Poll keeps asking")
	}
	if msg := squash(served.testid("message").Text()); !strings.Contains(msg, "requested pass ran") || !strings.Contains(msg, "4 due, 4 polled, 4 answered") {
		t.Errorf("served message %q", msg)
	}

	tr, get = row(h.post(c, "/admin/lanes/comix/pause", url.Values{"for": {"1h"}}, "HX-Request", "true"))
	if tr != "every 2s" || get != "/admin/lanes/comix?was=pause" {
		t.Fatalf("a pending Pause does not ask again: %q %q", tr, get)
	}
	storetest.Insert(t, h.pool, storetest.Pass{Site: word.Comix, StartedAt: t0.Add(2 * time.Second), Skip: word.SkipPaused})
	served = h.get(c, get, "HX-Request", "true")
	if tr, _ := row(served); tr != "" || !strings.Contains(served.testid("message").Text(), "Paused") {
		t.Errorf("a served Pause: trigger %q, message %q", tr, served.testid("message").Text())
	}
}

// A Pause is served by a paused pass that started after it was asked for:
// the paused pass of an earlier Pause does not serve a new one, and another
// replica's not-leader pass does not undo a Pause already served.
func TestAPauseIsServedOnlyByAPausedPassStartedAfterItWasAsked(t *testing.T) {
	t.Parallel()
	var clock atomic.Int64
	clock.Store(t0.UnixMilli())
	now := func() time.Time { return time.UnixMilli(clock.Load()) }
	h := newHarness(t, func(d *handlers.Deps) { d.Now = now })
	c := h.owner()
	tick := func() { clock.Add(1000) }
	pending := func(when string, want bool) {
		t.Helper()
		r := h.get(c, "/admin/lanes/comix?was=pause", "HX-Request", "true").find(`[data-testid="lane-row"][data-site="comix"]`)
		if _, asks := r.Attr("hx-trigger"); asks != want {
			t.Errorf("%s: the Pause reads as pending %v, want %v", when, asks, want)
		}
	}
	pause := func() {
		h.post(c, "/admin/lanes/comix/pause", url.Values{"for": {"1h"}}, "HX-Request", "true")
		tick()
	}
	pass := func(skip word.Skip) {
		storetest.Insert(t, h.pool, storetest.Pass{Site: word.Comix, StartedAt: now(), Skip: skip})
		tick()
	}

	pause()
	pending("before any pass", true)
	pass("paused")
	pending("after a paused pass", false)
	h.post(c, "/admin/lanes/comix/resume", nil, "HX-Request", "true")
	tick()
	pause()
	pending("a second Pause, with only the first Pause's paused pass behind it", true)
	pass("paused")
	pending("after the second Pause's paused pass", false)
	pass("not-leader")
	pending("after another replica's not-leader pass", false)
}
