package announce

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/word"
)

// Discord posts one message per Series per pass to the Readers' webhook
// (READERS_WEBHOOK_URL), mentioning every opted-in Reader behind on it.
type Discord struct {
	// hook is a pointer so even %#v of a Discord prints no secret.
	hook   *word.Secret
	hash   string
	client *http.Client
}

// NewDiscord builds the Discord sender; nil (no channel) when url is unset.
// client nil gets notify's default timeout; it never follows redirects.
func NewDiscord(url word.Secret, client *http.Client) (*Discord, error) {
	if !url.Set() {
		return nil, nil
	}
	if err := notify.ValidateWebhookURL(url); err != nil {
		return nil, errors.New("announce: READERS_WEBHOOK_URL must be an absolute https URL without credentials")
	}
	sum := sha256.Sum256([]byte(url.Reveal()))
	return &Discord{hook: &url, hash: hex.EncodeToString(sum[:]), client: notify.WebhookClient(client)}, nil
}

// Channel is word.ChannelDiscord.
func (d *Discord) Channel() word.Channel { return word.ChannelDiscord }

// WebhookHash is the dead_webhooks key of the Readers' webhook, never the
// address.
func (d *Discord) WebhookHash() string { return d.hash }

// Colour is the accent of the announcements (not the owner notices' danger).
const Colour = 3447003

type discordPayload struct {
	Content         string          `json:"content"`
	Embeds          []discordEmbed  `json:"embeds"`
	AllowedMentions allowedMentions `json:"allowed_mentions"`
}

type allowedMentions struct {
	Users []string `json:"users"`
	Parse []string `json:"parse"` // always [], never null
}

type discordEmbed struct {
	Title       string     `json:"title"`
	URL         string     `json:"url,omitempty"`
	Description string     `json:"description"`
	Color       int        `json:"color"`
	Thumbnail   *thumbnail `json:"thumbnail,omitempty"`
}

type thumbnail struct {
	URL string `json:"url"`
}

// Message is the payload for a: the mentions, exactly those users allowed,
// and one embed of validated fields.
func (d *Discord) message(a Announcement) (discordPayload, []Recipient) {
	var mentions, users []string
	var to []Recipient
	for _, r := range a.Readers {
		if r.DiscordID == "" {
			continue // a local Reader cannot be mentioned
		}
		mentions = append(mentions, "<@"+r.DiscordID+">")
		users = append(users, r.DiscordID)
		to = append(to, r)
	}
	link := a.ChapterURL
	if link == "" {
		link = a.SeriesURL
	}
	desc := ChapterWords(a.Chapters)
	if a.BookmarkURL != "" {
		desc += "\n[Open in mangabookmark](" + a.BookmarkURL + ")"
	}
	e := discordEmbed{Title: truncate(EscapeMarkdown(a.Title), 256), URL: link, Description: desc, Color: Colour}
	if a.CoverURL != "" {
		e.Thumbnail = &thumbnail{URL: a.CoverURL}
	}
	return discordPayload{
		Content:         strings.Join(mentions, " "),
		Embeds:          []discordEmbed{e},
		AllowedMentions: allowedMentions{Users: users, Parse: []string{}},
	}, to
}

// ChapterWords says the chapters: "Chapter 101", "Chapters 101–103" for a
// run, "Chapters 101, 103" otherwise.
func ChapterWords(cs []word.Chapter) string {
	switch len(cs) {
	case 0:
		return "New chapter"
	case 1:
		return "Chapter " + string(cs[0])
	}
	if consecutive(cs) {
		return "Chapters " + string(cs[0]) + "–" + string(cs[len(cs)-1])
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = string(c)
	}
	return "Chapters " + strings.Join(parts, ", ")
}

// consecutive: whole numbers, each one more than the last.
func consecutive(cs []word.Chapter) bool {
	prev := -1
	for i, c := range cs {
		var n int
		if _, err := fmt.Sscanf(string(c), "%d", &n); err != nil || fmt.Sprint(n) != string(c) {
			return false
		}
		if i > 0 && n != prev+1 {
			return false
		}
		prev = n
	}
	return true
}

// EscapeMarkdown escapes Discord's markdown characters in a title.
func EscapeMarkdown(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\*_~`|>[]()#<@:-", r) {
			b.WriteRune('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Send posts a's one message. Every mentioned Reader gets the same answer;
// a Reader with no Discord id is not sent to and is not in the answer's
// failures (nothing can be sent to them on this channel).
func (d *Discord) Send(ctx context.Context, a Announcement) map[string]error {
	p, to := d.message(a)
	if len(to) == 0 {
		return nil
	}
	err := d.post(ctx, p)
	if err == nil {
		return nil
	}
	out := make(map[string]error, len(to))
	for _, r := range to {
		out[r.ReaderID] = err
	}
	return out
}

// post sends one payload; its errors never carry the address.
func (d *Discord) post(ctx context.Context, p discordPayload) error {
	body, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	ctx, written := notify.WatchWritten(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.hook.Reveal(), bytes.NewReader(body))
	if err != nil {
		return notify.Scrub(err, *d.hook)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mangabookmark (reader announcements)")
	resp, err := d.client.Do(req)
	if err != nil && written() {
		return fmt.Errorf("%w (%w): %w", ErrTransport, ErrUnanswered, notify.Scrub(err, *d.hook))
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrTransport, notify.Scrub(err, *d.hook))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		return nil
	case s == http.StatusNotFound:
		return ErrChannelGone
	case s == http.StatusTooManyRequests:
		w := notify.RetryAfter(raw, resp.Header.Get("Retry-After"))
		return &RetryLater{Wait: w, Reason: fmt.Sprintf("Discord answered 429 (rate limited; retry after %s)", w)}
	default:
		return &StatusError{Status: s, Reason: fmt.Sprintf("Discord answered %d", s)}
	}
}
