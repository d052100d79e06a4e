package demo

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
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
	// clockMoved records the clock's new lead for the notices command, so
	// it reads ages on the demo's clock as /admin does.
	clockMoved func(ctx context.Context) error
	// series reads one Series as the server holds it.
	series func(ctx context.Context, site, id string) (store.Series, error)
	// feed reads Ada's feed entries (FeedEntries, what her feed address
	// serves); feedURL is that address.
	feed    func(ctx context.Context) ([]store.FeedEntry, error)
	feedURL string
	// listingEvery and pace are the server's LISTING_EVERY and poll pace,
	// for the lines that say how a chapter was found.
	listingEvery, pace time.Duration
}

// The sink's two webhook paths: the owner's (DISCORD_WEBHOOK_URL) and the
// Readers' channel (READERS_WEBHOOK_URL), two webhooks of one stand-in.
const (
	demoOwnerHook   = "/api/webhooks/demo/sink"
	demoReadersHook = "/api/webhooks/demo/readers"
)

// demoSink stands in for Discord: it accepts each message, prints what the
// owner (or a mentioned Reader) would read on their phone, and keeps it for
// the demo's own page.
type demoSink struct {
	out   io.Writer
	clock func() time.Time
	// names are the demo Readers' names by Discord id, for the console.
	names map[string]string

	mu       sync.Mutex
	messages []handlers.DemoMessage
}

// demoWebhookMessage is what the sink reads of a webhook message: the
// owner's embeds carry a footer word, the Readers' a mention and
// allowed_mentions.
type demoWebhookMessage struct {
	Content string `json:"content"`
	Embeds  []struct {
		Title       string `json:"title"`
		URL         string `json:"url"`
		Description string `json:"description"`
		Footer      struct {
			Text string `json:"text"`
		} `json:"footer"`
	} `json:"embeds"`
	AllowedMentions struct {
		Users []string `json:"users"`
	} `json:"allowed_mentions"`
}

func (s *demoSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var p demoWebhookMessage
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&p); err != nil {
		http.Error(w, "not a webhook message", http.StatusBadRequest)
		return
	}
	reader := r.URL.Path == demoReadersHook
	if !reader && r.URL.Path != demoOwnerHook {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range p.Embeds {
		m := handlers.DemoMessage{At: s.clock(), Footer: e.Footer.Text, Title: e.Title, Text: e.Description, Link: e.URL}
		if !reader {
			s.messages = append(s.messages, m)
			fmt.Fprintf(s.out, "owner notice [%s] %s: %s (%s)\n", m.Footer, m.Title, m.Text, m.Link)
			continue
		}
		// The description's first line says the chapters; the next is the
		// "Open in mangabookmark" link, which the page shows as the link.
		m.Reader, m.Mentions = true, p.AllowedMentions.Users
		m.Text, _, _ = strings.Cut(m.Text, "\n")
		m.Footer = "mentions " + s.named(m.Mentions)
		s.messages = append(s.messages, m)
		fmt.Fprintf(s.out, "reader announcement: %s mentioned (%s): %s, %s (%s)\n", s.named(m.Mentions), p.Content, m.Title, m.Text, m.Link)
	}
	w.WriteHeader(http.StatusNoContent)
}

// named says the mentioned Readers by name.
func (s *demoSink) named(ids []string) string {
	if len(ids) == 0 {
		return "nobody"
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = cmp.Or(s.names[id], id)
	}
	return strings.Join(names, ", ")
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
			w.reportFeed(ctx, s, chapter)
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

// reportFeed prints, once Ada's feed holds the chapter, that it does: the
// Arrival is her feed's entry as soon as it is written (CONTEXT.md, Feed
// address), so this follows the found line at once.
func (w *demoWorld) reportFeed(ctx context.Context, s store.Series, chapter string) {
	if w.feed == nil {
		return
	}
	for {
		entries, err := w.feed(ctx)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Site == s.Site && e.SeriesID == s.SeriesID && e.Chapter == chapter {
				fmt.Fprintf(w.out, "demo: Ada's feed now has %s %q chapter %s (%s)\n", s.Site, s.Title, chapter, w.feedURL)
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}
