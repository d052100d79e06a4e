package handlers

import (
	"net/http"
	"slices"
	"time"

	"github.com/mangabookmark/mangabookmark/components"
)

// DemoMessage is one message the demo's webhook sink received.
type DemoMessage struct {
	At                        time.Time
	Footer, Title, Text, Link string
	// Reader: the message came to the Readers' webhook (READERS_WEBHOOK_URL),
	// not the owner's; Mentions are the user ids its allowed_mentions names.
	Reader   bool
	Mentions []string
}

// DemoSink is what `mangabookmark demo` tells the pages: the messages its
// stand-in for Discord has received. nil outside the demo, and then the
// demo's page does not exist.
type DemoSink interface {
	Messages() []DemoMessage
}

// handleDemoNotices is /admin/demo/notices: the owner notices and the Reader
// announcements, each newest first.
func handleDemoNotices(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var owner, readers []components.DemoNotice
		for _, m := range slices.Backward(d.Demo.Messages()) {
			n := components.DemoNotice{
				At: d.when(m.At), Footer: m.Footer, Title: m.Title, Text: m.Text, Link: m.Link, Mentions: m.Mentions,
			}
			if m.Reader {
				readers = append(readers, n)
			} else {
				owner = append(owner, n)
			}
		}
		render(w, r, d.Logger, http.StatusOK, components.DemoNotices(viewerFrom(r.Context()), owner, readers))
	})
}
