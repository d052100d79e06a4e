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
}

// DemoSink is what `mangabookmark demo` tells the pages: the messages its
// stand-in for Discord has received. nil outside the demo, and then the
// demo's page does not exist.
type DemoSink interface {
	Messages() []DemoMessage
}

// handleDemoNotices is /admin/demo/notices, newest first.
func handleDemoNotices(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msgs := d.Demo.Messages()
		items := make([]components.DemoNotice, 0, len(msgs))
		for _, m := range slices.Backward(msgs) {
			items = append(items, components.DemoNotice{
				At: m.At.UTC().Format(time.RFC3339), Footer: m.Footer, Title: m.Title, Text: m.Text, Link: m.Link,
			})
		}
		render(w, r, d.Logger, http.StatusOK, components.DemoNotices(viewerFrom(r.Context()), items))
	})
}
