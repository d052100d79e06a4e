package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mangabookmark/mangabookmark/handlers"
)

// demoWorld is everything the script acts on: the stand-in Sites, the
// sidecar, the clock, and the server's own store and API.
type demoWorld struct {
	sites   map[string]*demoSite
	sidecar *demoSidecar // nil without Chromium
	clock   *demoClock
	out     io.Writer
	sink    *demoSink

	// sight sends one demo Reader's Sighting through the API.
	sight func(ctx context.Context, site, file string) error
	// links prints fresh sign-in links (after a skip the old ones have
	// expired on the demo's clock).
	links func(ctx context.Context) error
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
