package demo

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// The demo's script: what happens, and when, so that every signal the
// product exists for shows within minutes (CONTEXT.md, "Demo"). Stand-ins
// change what they serve; where a condition needs ownerWindow behind it, the
// demo clock skips ahead instead of seeding rows the Lanes would not write.
const (
	demoHostile       = "novelfull" // holds a challenge from the start
	demoHistory       = 13 * time.Hour
	demoSkip          = 13 * time.Hour
	demoTakenSite     = "asurascans"
	demoTakenFile     = "decimal.html"
	demoCompletedSite = "asurascans"
	demoCompletedFile = "ongoing.html"
	demoRelaidSite    = "demonicscans"
	demoQuietSite     = "lightnovelworld" // stops answering: a stall
	demoSightedSite   = demoTakenSite     // a number no Poll can confirm
	demoSightedFile   = demoTakenFile
	demoSightingAhead = 5 // chapters past the Latest Chapter the Reader reports
)

// demoPublished are the Series that publish a new chapter.
var demoPublished = []struct{ site, file string }{
	{"asurascans", "ongoing.html"},
	{"demonicscans", "ongoing.html"},
	{"lightnovelworld", "ongoing.html"},
	{"comix", "ongoing.html"},
}

// demoEvent is one line of the timeline.
type demoEvent struct {
	Key string        // names the event for the tests
	At  time.Duration // after the start
	Say string
	Do  func(ctx context.Context, w *demoWorld) error
}

// demoScript is the timeline; without a sidecar the browser events are left
// out (the guide says so in one line).
func demoScript(withSidecar bool) []demoEvent {
	ev := []demoEvent{
		{Key: "publish", At: 30 * time.Second, Say: "New chapters on four Series (comix's only with the sidecar): the demo Readers' embers light on /; each is printed as it is found, with whether the listing named it.", Do: func(ctx context.Context, w *demoWorld) error {
			return w.publish(ctx, withSidecar)
		}},
		{Key: "take-down", At: 30 * time.Second, Say: "asurascans takes one Series down (404): a not_found failure row.", Do: func(_ context.Context, w *demoWorld) error {
			return w.sites[demoTakenSite].TakeDown(demoTakenFile, true)
		}},
		{Key: "complete", At: time.Minute, Say: "asurascans marks a Series completed: the completion hint and the site-completed figure.", Do: func(_ context.Context, w *demoWorld) error {
			return w.sites[demoCompletedSite].Complete(demoCompletedFile)
		}},
		{Key: "sighting", At: time.Minute, Say: fmt.Sprintf("Ada's userscript reports chapter +%d of the taken-down Series: a number no Poll can confirm (unverified once it has failed for 12 hours).", demoSightingAhead), Do: func(ctx context.Context, w *demoWorld) error {
			return w.sight(ctx, demoSightedSite, demoSightedFile)
		}},
		{Key: "relayout", At: 90 * time.Second, Say: "demonicscans ships a new layout: its Series read no_chapter.", Do: func(_ context.Context, w *demoWorld) error {
			return w.sites[demoRelaidSite].Relayout(true)
		}},
		{Key: "quiet", At: 90 * time.Second, Say: "lightnovelworld stops answering: its Lane owes Polls and makes none.", Do: func(_ context.Context, w *demoWorld) error {
			w.sites[demoQuietSite].server.Down()
			return nil
		}},
	}
	if withSidecar {
		ev = append(ev, demoEvent{Key: "sidecar-stop", At: 90 * time.Second, Say: "The browser sidecar stops: comix and kagane cannot be read.", Do: func(_ context.Context, w *demoWorld) error {
			w.sidecar.Stop()
			return nil
		}})
	}
	skipSay := "The clock skips 13 hours: adapter-broken (demonicscans), stall (lightnovelworld)"
	if withSidecar {
		skipSay += ", sidecar-down"
	}
	ev = append(ev,
		demoEvent{Key: "skip", At: 2*time.Minute + 30*time.Second, Say: skipSay + " hold, one embed each; the taken-down Series is failing and its reported number unverified.", Do: func(ctx context.Context, w *demoWorld) error {
			if withSidecar {
				w.browserResting(ctx)
			}
			return w.skip(ctx)
		}},
		demoEvent{Key: "recover", At: 4 * time.Minute, Say: "demonicscans' layout returns, the taken-down Series comes back, lightnovelworld answers again" + sidecarSay(withSidecar, ", the sidecar restarts") + ": their notices close.", Do: func(ctx context.Context, w *demoWorld) error {
			if err := w.sites[demoRelaidSite].Relayout(false); err != nil {
				return err
			}
			if err := w.sites[demoTakenSite].TakeDown(demoTakenFile, false); err != nil {
				return err
			}
			if w.sidecar != nil {
				if err := w.sidecar.Start(ctx); err != nil {
					return err
				}
			}
			return w.sites[demoQuietSite].server.Up()
		}},
		demoEvent{Key: "quiet-again", At: 5 * time.Minute, Say: "lightnovelworld stops answering again.", Do: func(_ context.Context, w *demoWorld) error {
			w.sites[demoQuietSite].server.Down()
			return nil
		}},
		demoEvent{Key: "skip-again", At: 5*time.Minute + 30*time.Second, Say: "The clock skips 13 hours again: a second stall episode, a second embed.", Do: func(ctx context.Context, w *demoWorld) error {
			return w.skip(ctx)
		}},
		demoEvent{Key: "answer-again", At: 6*time.Minute + 30*time.Second, Say: "lightnovelworld answers again. The demo has played; the server keeps running until Ctrl-C.", Do: func(_ context.Context, w *demoWorld) error {
			return w.sites[demoQuietSite].server.Up()
		}},
	)
	return ev
}

// publish releases the next chapter of each demoPublished Series and
// prints, as each is found, how (reportFound). comix is not polled without
// the sidecar: its release is made but not watched.
func (w *demoWorld) publish(ctx context.Context, withSidecar bool) error {
	released := w.clock.Now()
	for _, p := range demoPublished {
		next, err := w.sites[p.site].Publish(p.file)
		if err != nil {
			return err
		}
		s, _ := w.sites[p.site].series(p.file)
		if w.series != nil && (withSidecar || p.site != "comix") {
			go w.reportFound(ctx, p.site, s.Ref.SeriesID, next, released)
		}
	}
	return nil
}

func sidecarSay(with bool, s string) string {
	if with {
		return s
	}
	return ""
}

// printTimeline writes the script as the guide's timeline.
func printTimeline(out io.Writer, script []demoEvent) {
	fmt.Fprintln(out, "demo timeline (minutes after the start):")
	fmt.Fprintf(out, "  0:00  %s refuses every request, as it has for %s: a no-browser-route embed on its first pass.\n", demoHostile, demoHistory)
	for _, e := range script {
		fmt.Fprintf(out, "  %d:%02d  %s\n", int(e.At.Minutes()), int(e.At.Seconds())%60, e.Say)
	}
}

// play runs the script on the real clock. The Lanes see each event on their
// next pass (every demoPace): nothing is forced, so every pass the Lanes
// write is one they would write for a real Site doing the same.
func (w *demoWorld) play(ctx context.Context, script []demoEvent, start time.Time) error {
	for _, e := range script {
		t := time.NewTimer(time.Until(start.Add(e.At)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		if err := w.apply(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// apply plays one event.
func (w *demoWorld) apply(ctx context.Context, e demoEvent) error {
	if err := e.Do(ctx, w); err != nil {
		return fmt.Errorf("demo: %q: %w", strings.TrimSuffix(e.Say, "."), err)
	}
	fmt.Fprintf(w.out, "demo: %s\n", e.Say)
	return nil
}

// skip moves the demo's clock demoSkip ahead, records its lead for the
// notices command and prints fresh sign-in links.
func (w *demoWorld) skip(ctx context.Context) error {
	w.clock.Skip(demoSkip)
	if w.clockMoved != nil {
		if err := w.clockMoved(ctx); err != nil {
			return err
		}
	}
	return w.links(ctx)
}
