// Package announce tells Readers of new chapters (CONTEXT.md, Announcement):
// after each pass it finds the Arrivals its Readers are behind on, records
// each (Reader, channel, Series, chapter) once, and sends them on the
// Readers' channels with the owner notices' claim, send, record shape
// (ADR 0005). Like notify, it imports no session or OAuth code.
package announce

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mangabookmark/mangabookmark/word"
)

// Announcement is one Series' new chapters, found in one pass, for the
// Readers behind on it who turned a channel on. Every text field is a
// validated value of ours (a parsed title, an address the gate accepts, a
// chapter number), never page text.
type Announcement struct {
	Site     word.Site
	SeriesID string
	Title    string
	// Chapters are the new numbers, lowest first: "chapters 101–103".
	Chapters []word.Chapter
	// ChapterURL opens the newest chapter on the Site ("" when unknown:
	// SeriesURL then).
	ChapterURL, SeriesURL string
	// BookmarkURL opens the Bookmark in mangabookmark; CoverURL is our own
	// copy of the cover ("" when none), both absolute from PUBLIC_BASE_URL.
	BookmarkURL, CoverURL string
	Readers               []Recipient
}

// Recipient is a Reader an Announcement is for.
type Recipient struct {
	ReaderID string
	// DiscordID is the Reader's Discord user id; "" for a local-mode
	// Reader, who cannot be mentioned.
	DiscordID string
}

// Sender delivers Announcements on one channel.
type Sender interface {
	Channel() word.Channel
	// Send delivers a to each of its Readers and answers, per ReaderID,
	// nil or why it failed. An error wrapping ErrGone says the endpoint is
	// gone for good (a push subscription answered 404 or 410, the Readers'
	// webhook 404): it is not retried.
	Send(ctx context.Context, a Announcement) map[string]error
}

// ErrGone marks a delivery whose endpoint no longer exists.
var ErrGone = errors.New("announce: the endpoint is gone")

// ErrChannelGone marks a delivery whose channel's own endpoint is gone (the
// Readers' webhook answered 404): the Announcer turns the channel off until
// the setting changes. It wraps ErrGone.
var ErrChannelGone = fmt.Errorf("%w: the channel's webhook answered 404", ErrGone)

// RetryLater is a refusal that names its wait (a 429's Retry-After): the
// Announcer sends nothing more on the channel until Wait has passed.
type RetryLater struct {
	Wait   time.Duration
	Reason string // free of secrets
}

func (e *RetryLater) Error() string { return e.Reason }

// StatusError is an answer the endpoint gave with a status that is neither
// success, gone nor 429: its text is the reason recorded, its Status what
// the send counter reads (Result).
type StatusError struct {
	Status int
	Reason string // free of secrets
}

func (e *StatusError) Error() string { return e.Reason }

// Result is what one Reader's answer (nil: delivered) came to, as the send
// counter names it (issue 25, item 5).
func Result(err error) word.SendResult {
	var later *RetryLater
	var status *StatusError
	switch {
	case err == nil:
		return word.SendSent
	case errors.As(err, &later):
		return word.SendRateLimited
	case errors.Is(err, ErrGone):
		return word.SendGone
	case errors.Is(err, ErrTransport):
		return word.SendNoAnswer
	case errors.As(err, &status) && status.Status >= 500:
		return word.SendServerError
	case errors.As(err, &status) && status.Status >= 400:
		return word.SendRejected
	}
	return word.SendFailed
}
