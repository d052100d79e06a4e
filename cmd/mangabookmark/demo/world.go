package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// demoWorld is everything the script acts on: the stand-in Sites, the
// sidecar, the clock, and the server's own store and API.
type demoWorld struct {
	sites   map[string]*demoSite
	sidecar *demoSidecar // nil without Chromium
	clock   *demoClock
	out     io.Writer
	sink    *demoSink
	// sinkServer serves the sink on loopback.
	sinkServer *loopbackServer
	room       *demoRoom

	// sight sends one demo Reader's Sighting through the API.
	sight func(ctx context.Context, site, file string) error
	// lastSkip is the skip value of a Site's newest pass-log row.
	lastSkip func(ctx context.Context, site string) (word.Skip, error)
	// links prints fresh sign-in links (after a skip the old ones have
	// expired on the demo's clock).
	links func(ctx context.Context) error
	// series reads one Series as the server holds it.
	series func(ctx context.Context, site, id string) (store.Series, error)
	// listingEvery and pace are the server's LISTING_EVERY and poll pace,
	// for the lines that say how a chapter was found.
	listingEvery, pace time.Duration
}

// demoSink stands in for Discord: it accepts each message, prints what the
// owner would read on their phone, and keeps it for the demo's own page.
type demoSink struct {
	out   io.Writer
	clock func() time.Time

	mu       sync.Mutex
	messages []handlers.DemoMessage
}

func (s *demoSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var p struct {
		Embeds []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
			Footer      struct {
				Text string `json:"text"`
			} `json:"footer"`
		} `json:"embeds"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&p); err != nil {
		http.Error(w, "not a webhook message", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range p.Embeds {
		m := handlers.DemoMessage{At: s.clock(), Footer: e.Footer.Text, Title: e.Title, Text: e.Description, Link: e.URL}
		s.messages = append(s.messages, m)
		fmt.Fprintf(s.out, "owner notice [%s] %s: %s (%s)\n", m.Footer, m.Title, m.Text, m.Link)
	}
	w.WriteHeader(http.StatusNoContent)
}

// Messages returns what the sink has received, oldest first.
func (s *demoSink) Messages() []handlers.DemoMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]handlers.DemoMessage(nil), s.messages...)
}

// browserResting waits, a little, until both browser Lanes have just written
// a browser-down pass. A dead sidecar makes a browser Lane alternate between
// a pass that finds it unreachable and a browser-down pass, so the dead
// sidecar reads as sidecar-down and never as a stall (CONTEXT.md). A real
// Lane never goes 13 hours between two passes; the demo's skip must not
// open such a gap between two unreachable passes either, so it waits for a
// moment when both Lanes rest after a browser-down pass.
func (w *demoWorld) browserResting(ctx context.Context) {
	deadline := time.Now().Add(demoPace * 3)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		resting := true
		for _, site := range []word.Site{word.Comix, word.Kagane} {
			skip, err := w.lastSkip(ctx, string(site))
			resting = resting && err == nil && skip == word.SkipBrowserDown
		}
		if resting {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// demoFoundWithin bounds how long the demo watches for a released chapter:
// past it the line is never printed (a Site the demo cannot read, a stop).
const demoFoundWithin = 3 * time.Minute

// reportFound prints, once the server has written chapter as the Latest
// Chapter of a Series released at released (the demo's clock), how long it
// took and whether the listing named the chapter before the Series' own
// read confirmed it: what LISTING_EVERY buys, on the console.
func (w *demoWorld) reportFound(ctx context.Context, site, id, chapter string, released time.Time) {
	ctx, cancel := context.WithTimeout(ctx, demoFoundWithin)
	defer cancel()
	for {
		s, err := w.series(ctx, site, id)
		if err != nil {
			return
		}
		if s.LatestChapter != nil && *s.LatestChapter == chapter {
			fmt.Fprintln(w.out, foundLine(s, chapter, released, w.listingEvery, w.pace))
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// foundLine says how a released chapter was found.
func foundLine(s store.Series, chapter string, released time.Time, listingEvery, pace time.Duration) string {
	took := s.CheckedAt.Sub(released).Round(time.Second)
	line := fmt.Sprintf("demo: %s %q chapter %s written %v after its release", s.Site, s.Title, chapter, took)
	if s.ListedChapter != nil && *s.ListedChapter == chapter && !s.ListedAt.Before(released) {
		return line + fmt.Sprintf(", named by the listing %v after it (LISTING_EVERY %v)", s.ListedAt.Sub(released).Round(time.Second), listingEvery)
	}
	return line + fmt.Sprintf(", by the Series' own read (poll pace %v), before a listing named it", pace)
}
