package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// runNotices is `mangabookmark notices [--json]`: what the server recorded
// of its webhook (configured? dead?) and the open owner notices,
// each with its condition, Site, since when it holds, and when it was sent
// or why it is still pending. It returns an error — a non-zero exit — while
// any notice is pending or the webhook is dead, so a timer or a script sees
// a stuck delivery without reading the text. args are the arguments after
// the command's name.
func runNotices(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("notices", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the notices as JSON, for scripts")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mangabookmark notices [--json]")
		fmt.Fprintln(stderr, "Lists the open owner notices; exits non-zero while one is pending.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("notices: unexpected argument %q", fs.Arg(0))
	}
	dbURL := getenv("DATABASE_URL")
	if dbURL == "" {
		return errors.New("notices: DATABASE_URL is unset")
	}
	st, err := store.Open(ctx, dbURL, store.Pools{})
	if err != nil {
		return fmt.Errorf("notices: %w", err)
	}
	defer st.Close()
	view, err := readServerView(ctx, st, time.Now())
	if err != nil {
		return fmt.Errorf("notices: %w", err)
	}
	if *asJSON {
		err = writeNoticesJSON(stdout, view)
	} else {
		err = writeNoticesText(stdout, view, view.now)
	}
	if err != nil {
		return fmt.Errorf("notices: %w", err)
	}
	return noticesVerdict(view.status)
}

// readServerView reads the notices as the server sees them. The settings
// are the server's, not this command's: what the server recorded at start —
// its webhook and its browser Sites, which the conditions depend on — never
// DISCORD_WEBHOOK_URL or BROWSER_SITES from this environment. Its clock is
// the server's too: wall is this command's clock, and the conditions and
// their ages are derived at wall plus what the server recorded of its own
// clock's lead (the demo's skips), the moment /admin derives them at
// (CONTEXT.md, How each owner-notice condition's age is derived).
func readServerView(ctx context.Context, st *store.Store, wall time.Time) (serverView, error) {
	hook, recorded, err := st.ReadServerWebhook(ctx)
	if err != nil {
		return serverView{}, err
	}
	now := wall.Add(hook.ClockAhead)
	zone, err := word.ParseZone(hook.TimeZone)
	if err != nil {
		// A zone this binary does not know (a newer server's): the
		// instant is still right in UTC.
		zone = time.UTC
	}
	browser, err := serverBrowserSites(hook)
	if err != nil {
		return serverView{}, err
	}
	n, err := notify.New(notify.Options{Store: st, BrowserSites: browser, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return serverView{}, err
	}
	status, err := n.Status(ctx, now)
	if err != nil {
		return serverView{}, err
	}
	status.Enabled = recorded && hook.Configured
	if status.Enabled {
		if status.WebhookDeadAt, err = st.WebhookDeadAt(ctx, hook.Hash); err != nil {
			return serverView{}, err
		}
	}
	failing, err := st.FailingChannels(ctx, now.Add(-ReaderChannelFailing))
	if err != nil {
		return serverView{}, err
	}
	delivery, err := st.DeliveryCounts(ctx, now.Add(-24*time.Hour), "")
	if err != nil {
		return serverView{}, err
	}
	return serverView{now: now, zone: zone, status: status, recorded: recorded, at: hook.RecordedAt,
		browser: browser.Names(), browserKnown: hook.BrowserKnown, failing: failing, delivery: delivery}, nil
}

// noticesVerdict is the command's exit: an error while a notice is pending
// or the webhook is dead. With the push off nothing is pending: no Lane
// sends or closes a notice, so a row left from when DISCORD_WEBHOOK_URL was
// set would otherwise fail every run for ever.
func noticesVerdict(status notify.Status) error {
	pending := 0
	for _, nt := range status.Notices {
		if nt.Pending() && status.Enabled {
			pending++
		}
	}
	switch {
	case pending > 0:
		return fmt.Errorf("notices: %d owner notice(s) pending", pending)
	case !status.WebhookDeadAt.IsZero():
		return errors.New("notices: the Discord webhook is dead; change DISCORD_WEBHOOK_URL")
	}
	return nil
}

// serverBrowserSites is the browser Sites the server recorded; the default
// set while no server has recorded them (none yet, or one older than
// migration 0012), as the server itself would read an unset BROWSER_SITES.
func serverBrowserSites(hook store.ServerWebhook) (word.BrowserSites, error) {
	if !hook.BrowserKnown {
		return word.ParseBrowserSites("")
	}
	out := word.BrowserSites{}
	for _, site := range hook.BrowserSites {
		out[word.Site(site)] = true
	}
	return out, nil
}

// subjectName is the notice's subject as the message's title names it.
func subjectName(site string) string {
	if site == "" {
		return "browser sidecar"
	}
	return site
}

// stamp is a moment as the pages print it (word.When), in the owner's zone
// the server recorded.
func (v serverView) stamp(t time.Time) string { return word.When(t, v.zone) }

// serverView is the notices' state as the server recorded it.
type serverView struct {
	now      time.Time      // the server's clock, which every age is read on
	zone     *time.Location // the owner's time zone (TIME_ZONE), which every moment is printed in
	status   notify.Status
	recorded bool      // a server has recorded its webhook state
	at       time.Time // when it did
	// browser are the browser Sites the server recorded (browserKnown), or
	// the default the conditions assumed.
	browser      []string
	browserKnown bool
	// failing are the Reader channels whose oldest unsent, failed
	// announcement is over ReaderChannelFailing old (issue 21).
	failing []store.FailingChannel
	// delivery is each Reader channel's last day of announcements; the
	// command names those sent with no answer (docs/adr/0017).
	delivery []store.ChannelDelivery
}

// ReaderChannelFailing is how long a Reader channel's announcement must
// have gone unsent, after failing, before the command lists the channel.
const ReaderChannelFailing = 12 * time.Hour

func browserList(sites []string) string {
	if len(sites) == 0 {
		return "none"
	}
	return strings.Join(sites, ",")
}

func writeNoticesText(w io.Writer, v serverView, now time.Time) error {
	st := v.status
	switch {
	case !v.recorded:
		fmt.Fprintln(w, "No server has recorded its webhook setting in this database yet: start `mangabookmark serve` on it once. Until then owner notices count as off.")
	case !st.Enabled:
		fmt.Fprintf(w, "Owner notices are off: the server started at %s without DISCORD_WEBHOOK_URL.\n", v.stamp(v.at))
	case !st.WebhookDeadAt.IsZero():
		fmt.Fprintf(w, "The Discord webhook is dead: Discord answered 404 at %s. Nothing is sent until DISCORD_WEBHOOK_URL changes.\n",
			v.stamp(st.WebhookDeadAt))
	default:
		fmt.Fprintf(w, "Owner notices are on: the server started at %s with a Discord webhook.\n", v.stamp(v.at))
	}
	switch {
	case v.recorded && !v.browserKnown:
		fmt.Fprintln(w, "The server has not recorded its BROWSER_SITES yet (it does at start): the conditions below assume the default, "+word.DefaultBrowserSites+".")
	case v.recorded:
		fmt.Fprintf(w, "Browser Sites as the server started with them: %s.\n", browserList(v.browser))
	}
	for _, f := range v.failing {
		fmt.Fprintf(w, "Reader channel %s is failing: an announcement unsent since %s (%s).\n",
			f.Channel, v.stamp(f.Since), word.Age(now.Sub(f.Since)))
	}
	for _, c := range v.delivery {
		if c.Unknown > 0 {
			fmt.Fprintf(w, "Reader channel %s: %d announcement(s) in the last 24 h may not have arrived (sent, no answer came; not sent again).\n",
				c.Channel, c.Unknown)
		}
	}
	if len(st.Notices) == 0 {
		_, err := fmt.Fprintln(w, "No open owner notices.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONDITION\tSITE\tHOLDS\tDELIVERY")
	for _, nt := range st.Notices {
		holds := "no longer holds; closes on the next pass"
		if !st.Enabled {
			holds = "no longer holds"
		}
		if nt.Holds {
			holds = fmt.Sprintf("since %s (%s)", v.stamp(nt.Since), word.Age(now.Sub(nt.Since)))
		}
		d := delivery(nt, v.stamp)
		if !st.Enabled && nt.Pending() {
			d = "not sent — owner notices are off"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", nt.Kind, subjectName(nt.Site), holds, d)
	}
	return tw.Flush()
}

// delivery says when the notice was sent, or why it is still pending.
func delivery(nt notify.Notice, stamp func(time.Time) string) string {
	if nt.MayNotHaveArrived {
		return "sent at " + stamp(nt.SentAt) + "; may not have arrived: no answer came (" + nt.LastError + "); not sent again"
	}
	if !nt.Pending() {
		return "sent at " + stamp(nt.SentAt)
	}
	if nt.Attempts == 0 {
		return "pending — not attempted yet"
	}
	s := fmt.Sprintf("pending — last attempt failed: %s (%d attempt(s), last at %s)",
		nt.LastError, nt.Attempts, stamp(nt.LastAttemptAt))
	switch {
	case nt.GaveUp && !nt.RetryNotBefore.IsZero():
		s += "; Discord refused the message, next attempt not before " + stamp(nt.RetryNotBefore)
	case !nt.RetryNotBefore.IsZero():
		s += "; next attempt not before " + stamp(nt.RetryNotBefore)
	}
	return s
}

type noticeJSON struct {
	Condition      string     `json:"condition"`
	Site           string     `json:"site"`
	Holds          bool       `json:"holds"`
	Since          *time.Time `json:"since"`
	Pending        bool       `json:"pending"`
	SentAt         *time.Time `json:"sent_at"`
	Attempts       int        `json:"attempts"`
	LastAttemptAt  *time.Time `json:"last_attempt_at"`
	LastError      string     `json:"last_error"`
	RetryNotBefore *time.Time `json:"retry_not_before"`
	GaveUp         bool       `json:"gave_up"`
	// MayNotHaveArrived: sent, no answer came; it is not sent again.
	MayNotHaveArrived bool `json:"may_not_have_arrived"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func writeNoticesJSON(w io.Writer, v serverView) error {
	st := v.status
	var recordedAt *time.Time
	if v.recorded {
		recordedAt = optTime(v.at)
	}
	out := struct {
		Enabled           bool          `json:"enabled"`
		WebhookRecordedAt *time.Time    `json:"webhook_recorded_at"`
		WebhookDeadAt     *time.Time    `json:"webhook_dead_at"`
		BrowserSites      []string      `json:"browser_sites"`
		BrowserRecorded   bool          `json:"browser_sites_recorded"`
		Notices           []noticeJSON  `json:"notices"`
		FailingChannels   []failingJSON `json:"failing_reader_channels"`
		Unknown           []unknownJSON `json:"reader_announcements_may_not_have_arrived"`
	}{FailingChannels: []failingJSON{}, Unknown: []unknownJSON{}, Enabled: st.Enabled, WebhookRecordedAt: recordedAt, WebhookDeadAt: optTime(st.WebhookDeadAt),
		BrowserSites: append([]string{}, v.browser...), BrowserRecorded: v.browserKnown, Notices: []noticeJSON{}}
	for _, f := range v.failing {
		out.FailingChannels = append(out.FailingChannels, failingJSON{Channel: string(f.Channel), Since: f.Since})
	}
	for _, c := range v.delivery {
		if c.Unknown > 0 {
			out.Unknown = append(out.Unknown, unknownJSON{Channel: string(c.Channel), Count: c.Unknown})
		}
	}
	for _, nt := range st.Notices {
		out.Notices = append(out.Notices, noticeJSON{
			Condition:         string(nt.Kind),
			Site:              nt.Site,
			Holds:             nt.Holds,
			Since:             optTime(nt.Since),
			Pending:           nt.Pending(),
			SentAt:            optTime(nt.SentAt),
			Attempts:          nt.Attempts,
			LastAttemptAt:     optTime(nt.LastAttemptAt),
			LastError:         nt.LastError,
			RetryNotBefore:    optTime(nt.RetryNotBefore),
			GaveUp:            nt.GaveUp,
			MayNotHaveArrived: nt.MayNotHaveArrived,
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// unknownJSON is a Reader channel's announcements of the last 24 hours
// sent with no answer.
type unknownJSON struct {
	Channel string `json:"channel"`
	Count   int    `json:"count"`
}

// failingJSON is a Reader channel failing for ReaderChannelFailing or more.
type failingJSON struct {
	Channel string    `json:"channel"`
	Since   time.Time `json:"since"`
}
