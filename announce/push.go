package announce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"syscall"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/mangabookmark/mangabookmark/internal/repeat"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// VAPIDKeys are the server's Web Push identity (RFC 8292), made once and
// kept under DATA_DIR: the public key goes to browsers when they subscribe,
// the private key signs every push and is never logged.
type VAPIDKeys struct {
	Public  string      // base64url, uncompressed P-256 point
	Private word.Secret // base64url, the P-256 scalar
}

// PushStore is what the Web Push sender reads and writes.
type PushStore interface {
	PushSubscriptions(ctx context.Context, readerID string) ([]store.PushSubscription, error)
	DeletePushSubscription(ctx context.Context, endpoint string) error
}

// PushOptions configure NewPush.
type PushOptions struct {
	Store PushStore
	Keys  VAPIDKeys
	// Subject is the VAPID contact: PUBLIC_BASE_URL when it is https, else
	// an e-mail address (webpush-go adds "mailto:").
	Subject string
	// TTL is how long a push service keeps a push for a browser that is
	// offline; zero means a day (a chapter is still news the next morning).
	TTL time.Duration
	// Timeout bounds each request to a push service; zero means 10 s.
	Timeout time.Duration
	Logger  *slog.Logger
	// Loopback lets the sender reach a push service on a loopback address
	// over plain http: the tests' stand-in push service. Never in production,
	// where a Reader's endpoint must be https and resolve to public addresses.
	Loopback bool
}

// Push is the Sender for word.ChannelPush.
type Push struct {
	o      PushOptions
	client *http.Client
	// repeated keeps a browser that fails on every pass to a line a minute.
	repeated *repeat.Log
}

// NewPush builds the Web Push sender.
func NewPush(o PushOptions) (*Push, error) {
	if o.Store == nil || o.Keys.Public == "" || !o.Keys.Private.Set() {
		return nil, errors.New("announce: web push needs a store and VAPID keys")
	}
	if o.TTL <= 0 {
		o.TTL = 24 * time.Hour
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Push{o: o, client: pushClient(o.Loopback), repeated: repeat.New(o.Logger, nil)}, nil
}

// pushClient dials only public addresses (word.PublicAddr, the fetch gate's
// rule): an endpoint is whatever a browser, or someone posing as one, sent,
// and must not make the server post into its own network. No redirects.
func pushClient(loopback bool) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("announce: push service address %q: %w", address, err)
		}
		if !word.PublicAddr(ap.Addr()) && !(loopback && ap.Addr().IsLoopback()) {
			return fmt.Errorf("announce: push service resolves to non-public address %s", ap.Addr())
		}
		return nil
	}}
	return &http.Client{
		Transport: &http.Transport{DialContext: d.DialContext, ForceAttemptHTTP2: true,
			TLSHandshakeTimeout: 5 * time.Second, MaxIdleConnsPerHost: 4},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Channel is word.ChannelPush.
func (p *Push) Channel() word.Channel { return word.ChannelPush }

// PushPayload is what a push carries to the service worker (/sw.js): small,
// and only our own validated values.
type PushPayload struct {
	Title    string `json:"title"`
	Body     string `json:"body"`
	URL      string `json:"url"`
	Bookmark string `json:"bookmark"`
	Icon     string `json:"icon,omitempty"`
}

// payloadFor is a's push: the title, its ChapterWords,
// the chapter (else the Series) on the Site, the Bookmark, the cover.
func payloadFor(a Announcement) PushPayload {
	p := PushPayload{Title: truncate(a.Title, 120), URL: a.ChapterURL, Bookmark: a.BookmarkURL, Icon: a.CoverURL}
	if p.URL == "" {
		p.URL = a.SeriesURL
	}
	if len(a.Chapters) > 0 {
		p.Body = ChapterWords(a.Chapters)
	}
	return p
}

// Send pushes a to every subscribed browser of each Reader, at most four
// requests at a time. A Reader's push is delivered when one browser took
// it: a retry would show it again on the browsers that did.
func (p *Push) Send(ctx context.Context, a Announcement) map[string]error {
	msg, err := json.Marshal(payloadFor(a))
	if err != nil {
		return everyReader(a, fmt.Errorf("announce: push payload: %w", err))
	}
	out := make(map[string]error, len(a.Readers))
	var mu sync.Mutex
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for _, r := range a.Readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			err := p.sendReader(ctx, r.ReaderID, msg)
			mu.Lock()
			out[r.ReaderID] = err
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func everyReader(a Announcement, err error) map[string]error {
	out := make(map[string]error, len(a.Readers))
	for _, r := range a.Readers {
		out[r.ReaderID] = err
	}
	return out
}

// sendReader pushes msg to each of one Reader's browsers, deleting those
// the push service says are gone. nil when one took it (the others' failures
// are logged); ErrUnanswered when a push went and got no answer (it may
// have been shown, so it is not retried); ErrGone when every browser is gone
// (or none is subscribed); else the last failure, to be retried.
func (p *Push) sendReader(ctx context.Context, readerID string, msg []byte) error {
	subs, err := p.o.Store.PushSubscriptions(ctx, readerID)
	if err != nil {
		return fmt.Errorf("announce: push: %w", err)
	}
	if len(subs) == 0 {
		return fmt.Errorf("announce: push: no browser subscribed: %w", ErrGone)
	}
	var failed, unanswered error
	delivered, gone := false, 0
	for _, s := range subs {
		err := p.sendOne(ctx, s, msg)
		switch {
		case err == nil:
			delivered = true
		case errors.Is(err, ErrGone):
			gone++
			if derr := p.o.Store.DeletePushSubscription(ctx, s.Endpoint); derr != nil {
				p.o.Logger.Error("web push: a gone subscription could not be deleted", "reader_id", readerID, "err", derr)
			}
		case errors.Is(err, ErrUnanswered):
			unanswered = err
		default:
			p.repeated.Fail(slog.LevelWarn, readerID, pushFailed, "reader_id", readerID, "err", err)
			failed = err
		}
	}
	switch {
	case delivered:
		p.repeated.Clear(readerID, pushFailed, "reader_id", readerID)
		return nil
	case unanswered != nil:
		return unanswered
	case gone == len(subs):
		return fmt.Errorf("announce: push: every browser unsubscribed: %w", ErrGone)
	}
	return failed
}

// pushFailed is logged when a browser's push failed: on every pass while
// its push service fails, so through repeat.Log.
const pushFailed = "web push failed"

// sendOne encrypts msg for one browser (RFC 8291, by webpush-go) and posts
// it within the Timeout. The error names the push service's host, never the
// endpoint: the endpoint is the browser's address for pushes.
func (p *Push) sendOne(ctx context.Context, s store.PushSubscription, msg []byte) error {
	u, err := url.Parse(s.Endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(p.o.Loopback && u.Scheme == "http")) {
		return fmt.Errorf("announce: push: the endpoint is not an https address: %w", ErrGone)
	}
	ctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	ctx, written := notify.WatchWritten(ctx)
	resp, err := webpush.SendNotificationWithContext(ctx, msg, &webpush.Subscription{
		Endpoint: s.Endpoint, Keys: webpush.Keys{P256dh: s.P256dh, Auth: s.Auth},
	}, &webpush.Options{
		HTTPClient: p.client, Subscriber: p.o.Subject, TTL: int(p.o.TTL.Seconds()), Urgency: webpush.UrgencyNormal,
		VAPIDPublicKey: p.o.Keys.Public, VAPIDPrivateKey: p.o.Keys.Private.Reveal(),
	})
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error prints the endpoint
		}
		if written() {
			return fmt.Errorf("announce: push to %s: no answer (%w): %w", u.Host, ErrUnanswered, err)
		}
		return fmt.Errorf("announce: push to %s: %w", u.Host, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	return classifyPush(u.Host, resp.StatusCode)
}

// classifyPush reads a push service's answer: 2xx delivered; 404 and 410
// the subscription is gone (RFC 8030 §7.3), never retried; anything else a
// failure the next pass retries (429 and 5xx are transient; another 4xx is
// our fault, and the owner sees it counted as failed).
func classifyPush(host string, status int) error {
	switch {
	case status >= 200 && status < 300:
		return nil
	case status == http.StatusNotFound || status == http.StatusGone:
		return fmt.Errorf("announce: push to %s: %d: %w", host, status, ErrGone)
	default:
		return &StatusError{Status: status, Reason: fmt.Sprintf("announce: push to %s: the push service answered %d", host, status)}
	}
}
