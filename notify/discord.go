package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// ValidateWebhookURL accepts an absolute https address, or plain http only
// to a loopback host (a local sink). Its errors never quote the address.
func ValidateWebhookURL(s word.Secret) error {
	u, err := url.Parse(s.Reveal())
	if err != nil {
		return errors.New("notify: DISCORD_WEBHOOK_URL is not a URL")
	}
	if !u.IsAbs() || u.Host == "" {
		return errors.New("notify: DISCORD_WEBHOOK_URL must be an absolute address")
	}
	if u.User != nil {
		return errors.New("notify: DISCORD_WEBHOOK_URL must not carry credentials")
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())) {
		return errors.New("notify: DISCORD_WEBHOOK_URL must be https (plain http only to a loopback host)")
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Colour is the dark branch of the danger token: one colour for all four,
// because all four are faults.
const Colour = 13589581

// The wire shape: one embed, nothing that can ping. Exactly these fields.
type payload struct {
	Embeds          []embed         `json:"embeds"`
	AllowedMentions allowedMentions `json:"allowed_mentions"`
}

type allowedMentions struct {
	Parse []string `json:"parse"` // always [], never null
}

type embed struct {
	Title       string `json:"title"`
	URL         string `json:"url,omitempty"`
	Description string `json:"description"`
	Color       int    `json:"color"`
	Timestamp   string `json:"timestamp"`
	Footer      footer `json:"footer"`
}

type footer struct {
	Text string `json:"text"`
}

// Discord's limits; the text here is far shorter, but a limit is cheaper to
// state than to debug.
const (
	maxTitle       = 256
	maxDescription = 4096
)

// message builds the embed from known fields only: the Site name (one of
// Sites), the condition word, an age and a link. Nothing read from a page
// reaches it.
func (n *Notifier) message(c Condition, passAt time.Time) payload {
	title := c.Kind.Subject(c.Site)
	return payload{
		Embeds: []embed{{
			Title:       truncate(title, maxTitle),
			URL:         n.link(c),
			Description: truncate(describe(c, passAt), maxDescription),
			Color:       Colour,
			Timestamp:   passAt.UTC().Format(time.RFC3339),
			Footer:      footer{Text: string(c.Kind)},
		}},
		AllowedMentions: allowedMentions{Parse: []string{}},
	}
}

// describe is the one sentence: condition, age, repair (word.NoticeKind
// holds the words, which the verdict line shares).
func describe(c Condition, now time.Time) string {
	return c.Kind.Sentence(c.Site, word.Age(c.Age(now)))
}

// PagePath is the path (and query) of the admin page that explains the
// condition. The embed's link and the verdict line both use it, so a message
// and the page it points to never disagree. adapter-broken opens the list of
// exactly the Series it counted (the yields-no-chapter filter, the
// condition's own predicate); the failing list needs a Latest Chapter and
// could look healthy.
func PagePath(c Condition) string {
	if c.Kind == word.AdapterBroken {
		return "/admin/series?" + url.Values{"site": {c.Site}, "filter": {string(store.FilterYieldsNoChapter)}}.Encode()
	}
	// stall, no-browser-route, sidecar-down: the Lanes page says why.
	return "/admin/lanes"
}

// link is the page that explains the condition, or "" without a base URL.
func (n *Notifier) link(c Condition) string {
	if n.base == nil {
		return ""
	}
	return strings.TrimRight(n.base.String(), "/") + PagePath(c)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// verdict is what Discord's answer means for the notice.
type verdict int

const (
	delivered     verdict = iota // 2xx: set notified_at
	retryNextPass                // 429, 5xx, transport failure: the next pass tries again
	deadWebhook                  // 404 Unknown Webhook: stop sending until the setting changes
	rejected                     // any other answer: tried again no sooner than an hour
	unanswered                   // written, then no answer: counted as sent, may not have arrived
)

// statusTable classifies Discord's answer; the first matching row wins and
// anything unlisted is rejected. This is the only place a status code is
// interpreted.
var statusTable = []struct {
	from, to int
	v        verdict
}{
	{200, 299, delivered},
	{404, 404, deadWebhook},
	{429, 429, retryNextPass}, // no attempt before its retry_after
	{500, 599, retryNextPass},
	{400, 499, rejected},
}

func classify(status int) verdict {
	for _, row := range statusTable {
		if status >= row.from && status <= row.to {
			return row.v
		}
	}
	return rejected
}

// result is what a send came to as the send counter names it: the
// verdict, with a retried one told apart by its status (0: no answer) and a
// refusal that never reached Discord (status 0) as failed.
func (r sendResult) result() word.SendResult {
	switch {
	case r.verdict == delivered:
		return word.SendSent
	case r.verdict == unanswered:
		return word.SendNoAnswer
	case r.verdict == deadWebhook:
		return word.SendGone
	case r.verdict == rejected && r.status == 0:
		return word.SendFailed
	case r.verdict == rejected:
		return word.SendRejected
	case r.status == http.StatusTooManyRequests:
		return word.SendRateLimited
	case r.status >= 500:
		return word.SendServerError
	}
	return word.SendNoAnswer
}

// maxResponse caps how much of Discord's answer is read.
const maxResponse = 16 << 10

// maxRetryAfter bounds a 429's wait: never longer than a Lane's default
// rest, so a confused answer cannot silence a notice for days.
const maxRetryAfter = time.Hour

type sendResult struct {
	verdict    verdict
	status     int
	retryAfter time.Duration
	reason     string // free of the webhook address
}

// send posts one message. It never returns or logs text containing the
// address.
func (n *Notifier) send(ctx context.Context, c Condition, passAt time.Time) sendResult {
	body, err := json.Marshal(n.message(c, passAt))
	if err != nil {
		return sendResult{verdict: rejected, reason: "encode message: " + err.Error()}
	}
	ctx, written := WatchWritten(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.hook.url.Reveal(), bytes.NewReader(body))
	if err != nil {
		return sendResult{verdict: rejected, reason: n.scrub(err).Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mangabookmark (owner notices)")
	resp, err := n.client.Do(req)
	if err != nil && written() {
		return sendResult{verdict: unanswered, reason: n.scrub(err).Error()}
	}
	if err != nil {
		return sendResult{verdict: retryNextPass, reason: n.scrub(err).Error()}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse)) // let the connection be reused
	res := sendResult{verdict: classify(resp.StatusCode), status: resp.StatusCode}
	switch res.verdict {
	case delivered:
		return res
	case deadWebhook:
		res.reason = deadReason
		return res
	}
	res.reason = fmt.Sprintf("Discord answered %d", resp.StatusCode)
	if resp.StatusCode == http.StatusTooManyRequests {
		res.retryAfter = retryAfter(raw, resp.Header.Get("Retry-After"))
		if res.retryAfter > 0 {
			res.reason += fmt.Sprintf(" (rate limited; retry after %s)", res.retryAfter)
		}
	}
	return res
}

// retryAfter reads a 429's wait: Discord's JSON body carries retry_after in
// seconds (fractional), and the Retry-After header carries it too. The
// longer of the two wins, bounded by maxRetryAfter.
func retryAfter(body []byte, header string) time.Duration {
	// Seconds are compared as floats and capped before they become a
	// Duration: a huge or infinite value would overflow into a negative wait.
	secs := 0.0
	var b struct {
		RetryAfter float64 `json:"retry_after"`
	}
	if json.Unmarshal(body, &b) == nil && b.RetryAfter > 0 {
		secs = b.RetryAfter
	}
	if h, err := strconv.ParseFloat(strings.TrimSpace(header), 64); err == nil && h > secs {
		secs = h // NaN compares false and is ignored
	}
	if secs >= maxRetryAfter.Seconds() {
		return maxRetryAfter
	}
	return time.Duration(secs * float64(time.Second))
}

// scrub strips the webhook address from an error.
func (n *Notifier) scrub(err error) error { return Scrub(err, n.hook.url) }

// Scrub strips a webhook address from an error. Go's HTTP client quotes the
// whole URL in *url.Error; its inner error names at most the host, but
// every form of the address (whole, path, escaped) is replaced anyway. The
// Readers' announcements (package announce) post through it too.
func Scrub(err error, secret word.Secret) error {
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = ue.Op + " webhook: " + ue.Err.Error()
		if ue.Timeout() {
			msg += " (timed out)"
		}
	}
	raw := secret.Reveal()
	forms := []string{raw, strconv.Quote(raw)}
	if u, perr := url.Parse(raw); perr == nil {
		forms = append(forms, u.String(), u.Path, u.EscapedPath(), u.RawQuery)
	}
	for _, f := range forms {
		if len(f) >= 8 { // never "/" or a short fragment of ordinary text
			msg = strings.ReplaceAll(msg, f, "[webhook]")
		}
	}
	return errors.New(msg)
}

// RetryAfter is a 429's wait as the owner notices read it (retryAfter), for
// the Readers' webhook.
func RetryAfter(body []byte, header string) time.Duration { return retryAfter(body, header) }

// WebhookClient is the client a webhook is posted with (webhookClient).
func WebhookClient(given *http.Client) *http.Client { return webhookClient(given) }
