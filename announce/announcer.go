package announce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mangabookmark/mangabookmark/internal/repeat"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// Store is what announce needs from the database; *store.Store satisfies it.
type Store interface {
	RecordAnnouncements(ctx context.Context, site string, since, now time.Time, discord bool) (int64, error)
	SettleStaleAnnouncements(ctx context.Context, ch word.Channel, site string, staleBefore time.Time) (int64, error)
	DropMootAnnouncements(ctx context.Context, ch word.Channel, site string) (int64, error)
	UnsentAnnouncements(ctx context.Context, site string, ch word.Channel) ([]store.Unsent, error)
	ClaimAnnouncements(ctx context.Context, ch word.Channel, site string, keys []store.AnnouncementKey, at time.Time) ([]store.AnnouncementKey, error)
	RecordAnnounced(ctx context.Context, ch word.Channel, site string, claimedAt time.Time, res store.AnnounceResult) error
	WebhookDeadAt(ctx context.Context, urlHash string) (time.Time, error)
	MarkWebhookDead(ctx context.Context, urlHash string, at time.Time) error
}

// StaleClaim is how old a claim must be before a pass counts it as sent:
// its holder stopped between claim and record (docs/adr/0005).
const StaleClaim = 5 * time.Minute

// SendBudget bounds the sends of one pass: a slow or hung endpoint delays
// the pass at most this long (each POST has its own, shorter, timeout), and
// what it did not reach waits, unclaimed, for the next pass.
const SendBudget = 30 * time.Second

// Options configures an Announcer. Only Store is required; with no Senders
// it records nothing and sends nothing.
type Options struct {
	Store Store
	// Senders are the channels announced on, one per word.Channel: Discord
	// (NewDiscord) and Web Push. The feed has no Sender: it reads the
	// Arrivals itself.
	Senders []Sender
	// PublicBaseURL is PUBLIC_BASE_URL: the Bookmark and cover links are
	// absolute below it. Empty: the Announcements carry neither.
	PublicBaseURL string
	Logger        *slog.Logger
	// Now is the wall clock claims are stamped by; nil means time.Now. The
	// pass time is the clock of everything else (the digest hour too).
	Now func() time.Time
	// Observer is told what each Reader's send came to, for the metrics
	// (issue 25, item 5); nil tells no one.
	Observer Observer
}

// Observer is told the result of each Reader's delivery of an
// Announcement on a channel: one per Reader the message was for.
type Observer interface {
	Announced(ch word.Channel, result word.SendResult)
}

// deadKeyed is a Sender whose endpoint can die as a whole (the Readers'
// webhook): its key is the dead_webhooks row that says so.
type deadKeyed interface{ WebhookHash() string }

// Announcer records and sends the Reader announcements after each pass.
type Announcer struct {
	store   Store
	senders []Sender
	base    string
	log     *slog.Logger
	now     func() time.Time
	observe Observer
	// repeated keeps a channel that fails on every pass to a line a minute.
	repeated *repeat.Log

	mu sync.Mutex
	// notBefore is, per channel, the end of a 429's wait.
	notBefore map[word.Channel]time.Time
}

// New validates opts and builds an Announcer.
func New(opts Options) (*Announcer, error) {
	if opts.Store == nil {
		return nil, errors.New("announce: no store")
	}
	a := &Announcer{store: opts.Store, log: opts.Logger, now: opts.Now, observe: opts.Observer,
		notBefore: map[word.Channel]time.Time{}}
	if a.log == nil {
		a.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.repeated = repeat.New(a.log, a.now)
	seen := map[word.Channel]bool{}
	for _, s := range opts.Senders {
		if s == nil {
			continue
		}
		if ch := s.Channel(); seen[ch] || (ch != word.ChannelDiscord && ch != word.ChannelPush) {
			return nil, fmt.Errorf("announce: a second or unknown sender for channel %q", ch)
		}
		seen[s.Channel()] = true
		a.senders = append(a.senders, s)
	}
	if opts.PublicBaseURL != "" {
		u, err := url.Parse(opts.PublicBaseURL)
		if err != nil || !u.IsAbs() || u.Host == "" {
			return nil, errors.New("announce: PUBLIC_BASE_URL must be an absolute address")
		}
		a.base = strings.TrimRight(opts.PublicBaseURL, "/")
	}
	return a, nil
}

// Hook is the value to chain after the owner notices (Chain): nil when no
// channel is on.
func (a *Announcer) Hook() func(ctx context.Context, site string, passAt time.Time) error {
	if a == nil || len(a.senders) == 0 {
		return nil
	}
	return a.Check
}

// Chain runs each non-nil hook in turn after a pass, every one even when an
// earlier one fails; nil when all are nil (the poller's "nil means off").
func Chain(hooks ...func(ctx context.Context, site string, passAt time.Time) error) func(ctx context.Context, site string, passAt time.Time) error {
	var on []func(ctx context.Context, site string, passAt time.Time) error
	for _, h := range hooks {
		if h != nil {
			on = append(on, h)
		}
	}
	switch len(on) {
	case 0:
		return nil
	case 1:
		return on[0]
	}
	return func(ctx context.Context, site string, passAt time.Time) error {
		var errs []error
		for _, h := range on {
			errs = append(errs, h(ctx, site, passAt))
		}
		return errors.Join(errs...)
	}
}

// Check runs after a pass of site's Lane: it records the announcements the
// Site's last day of Arrivals owes, then claims, sends and records those
// due, one message per Series per channel. A failed send is left for the
// next pass; Check returns an error only when the database fails.
func (a *Announcer) Check(ctx context.Context, site string, passAt time.Time) error {
	if !word.KnownSite(site) {
		return fmt.Errorf("announce: unknown site %q", site)
	}
	discordOn := false
	live := make([]Sender, 0, len(a.senders))
	for _, s := range a.senders {
		on, err := a.alive(ctx, s)
		if err != nil {
			return err
		}
		if on {
			live = append(live, s)
			discordOn = discordOn || s.Channel() == word.ChannelDiscord
		}
	}
	if _, err := a.store.RecordAnnouncements(ctx, site, passAt.Add(-store.AnnounceWindow), passAt, discordOn); err != nil {
		return fmt.Errorf("announce: %w", err)
	}
	sendCtx, cancel := context.WithTimeout(ctx, SendBudget)
	defer cancel()
	var errs []error
	for _, s := range live {
		errs = append(errs, a.sendChannel(sendCtx, s, site, passAt))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("announce: %s: %w", site, err)
	}
	return nil
}

// alive reports whether s's channel is on: not waiting out a 429, and (for
// the Readers' webhook) not answered 404.
func (a *Announcer) alive(ctx context.Context, s Sender) (bool, error) {
	a.mu.Lock()
	until := a.notBefore[s.Channel()]
	a.mu.Unlock()
	if a.now().Before(until) {
		return false, nil
	}
	d, ok := s.(deadKeyed)
	if !ok {
		return true, nil
	}
	at, err := a.store.WebhookDeadAt(ctx, d.WebhookHash())
	if err != nil {
		return false, fmt.Errorf("announce: webhook state: %w", err)
	}
	return at.IsZero(), nil
}

// sendChannel sends the Site's due announcements on s's channel, one
// Series at a time, each claimed just before its send so a channel that
// stops (a 429, a dead webhook, the budget spent) leaves the rest
// unclaimed.
func (a *Announcer) sendChannel(ctx context.Context, s Sender, site string, passAt time.Time) error {
	ch := s.Channel()
	if n, err := a.store.SettleStaleAnnouncements(ctx, ch, site, a.now().Add(-StaleClaim)); err != nil {
		return err
	} else if n > 0 {
		a.log.Warn("reader announcements counted as sent: the process that claimed them stopped before recording the answer",
			"channel", string(ch), "site", site, "count", n)
	}
	// A chapter read while its announcement waited (a digest, a retry) is
	// not announced: the "never a chapter the Reader has read".
	if _, err := a.store.DropMootAnnouncements(ctx, ch, site); err != nil {
		return err
	}
	rows, err := a.store.UnsentAnnouncements(ctx, site, ch)
	if err != nil {
		return err
	}
	for _, g := range groupDue(rows, passAt) {
		if ctx.Err() != nil {
			return nil // the pass's budget is spent: the rest waits
		}
		stop, err := a.sendGroup(ctx, s, site, g, passAt)
		if err != nil || stop {
			return err
		}
	}
	return nil
}

// sendGroup claims, sends and records one Series' due rows. stop says the
// channel must send nothing more this pass.
func (a *Announcer) sendGroup(ctx context.Context, s Sender, site string, g []store.Unsent, passAt time.Time) (stop bool, err error) {
	ch := s.Channel()
	claimedAt := a.now()
	won, err := a.store.ClaimAnnouncements(ctx, ch, site, keysOf(g), claimedAt)
	if err != nil || len(won) == 0 {
		return false, err
	}
	if g = only(g, won); len(g) == 0 {
		return false, nil
	}
	ann := a.announcement(g)
	answers := s.Send(ctx, ann)
	a.observed(ch, ann, answers)
	results, stop := a.judge(s, ann, g, answers, passAt)
	// The answer is recorded even when the pass's context has ended: the
	// message may have gone, and a claim left behind would read as a crash.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var errs []error
	for _, r := range results {
		errs = append(errs, a.store.RecordAnnounced(wctx, ch, site, claimedAt, r))
	}
	return stop, errors.Join(errs...)
}

// observed tells the Observer each Reader's answer: a Discord message
// answers every Reader it mentions at once, a push each Reader apart.
func (a *Announcer) observed(ch word.Channel, ann Announcement, answers map[string]error) {
	if a.observe == nil {
		return
	}
	for _, r := range ann.Readers {
		a.observe.Announced(ch, Result(answers[r.ReaderID]))
	}
}

// judge turns a Sender's answers into what to record, per outcome, and
// reacts to a channel-wide refusal: a 429 waits, a dead webhook is marked.
func (a *Announcer) judge(s Sender, ann Announcement, g []store.Unsent, answers map[string]error, passAt time.Time) ([]store.AnnounceResult, bool) {
	type outcome struct {
		reason  string
		unknown bool
	}
	byOutcome := map[outcome]*store.AnnounceResult{}
	var order []outcome
	stop := false
	for _, u := range g {
		var o outcome
		if err := answers[u.ReaderID]; err != nil {
			var halt bool
			o.reason, halt = a.react(s, err, passAt)
			o.unknown = errors.Is(err, ErrUnanswered)
			stop = stop || halt
		}
		r, ok := byOutcome[o]
		if !ok {
			r = &store.AnnounceResult{At: passAt, Err: o.reason, Unknown: o.unknown}
			byOutcome[o] = r
			order = append(order, o)
		}
		r.Keys = append(r.Keys, store.AnnouncementKey{ReaderID: u.ReaderID, SeriesID: u.SeriesID, Chapter: u.Chapter})
	}
	out := make([]store.AnnounceResult, 0, len(order))
	for _, o := range order {
		out = append(out, *byOutcome[o])
	}
	a.logJudged(s.Channel(), ann, out)
	return out, stop
}

// react reads one failed answer: the reason to record, and whether the
// channel sends nothing more this pass (a 429 waits, a dead webhook is
// marked, an endpoint that did not answer is not asked again).
func (a *Announcer) react(s Sender, err error, passAt time.Time) (reason string, stop bool) {
	var later *RetryLater
	switch {
	case errors.As(err, &later):
		a.wait(s.Channel(), later.Wait)
		return err.Error(), true
	case errors.Is(err, ErrChannelGone):
		a.markDead(s, passAt)
		return err.Error(), true
	case errors.Is(err, ErrGone):
		return store.AnnounceGone, false
	}
	return err.Error(), isTransport(err)
}

// notAllSent is logged when a message failed for some Reader: on every
// pass, for every Series, while the channel fails, so through repeat.Log.
const notAllSent = "reader announcement not sent to every Reader; retrying on a later pass"

// logJudged says in one line what one message came to.
func (a *Announcer) logJudged(ch word.Channel, ann Announcement, out []store.AnnounceResult) {
	attrs := []any{"channel", string(ch), "site", string(ann.Site), "series_id", ann.SeriesID}
	retry, unknown := false, false
	for _, r := range out {
		retry = retry || (r.Err != "" && !r.Unknown)
		unknown = unknown || r.Unknown
	}
	switch {
	case retry:
		a.repeated.Fail(slog.LevelWarn, string(ch), notAllSent, attrs...)
	case unknown:
		a.log.Warn("reader announcement sent but not answered; counted as sent, it may not have arrived", attrs...)
	default:
		a.repeated.Clear(string(ch), notAllSent, "channel", string(ch))
		a.log.Info("reader announcement sent", append(attrs, "readers", len(ann.Readers))...)
	}
}

// ErrTransport marks a send that never got an answer (a timeout, a refused
// connection): the channel sends nothing more this pass, so a hung endpoint
// costs one timeout per pass, not one per Series.
var ErrTransport = errors.New("announce: no answer")

// ErrUnanswered marks a send whose request was written whole and then got
// no answer: it may have arrived, so its rows are recorded sent-unknown and
// never posted again (docs/adr/0017).
var ErrUnanswered = errors.New("the request was sent")

func isTransport(err error) bool { return errors.Is(err, ErrTransport) }

func (a *Announcer) wait(ch word.Channel, d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if until := a.now().Add(d); until.After(a.notBefore[ch]) {
		a.notBefore[ch] = until
	}
}

func (a *Announcer) markDead(s Sender, at time.Time) {
	d, ok := s.(deadKeyed)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.store.MarkWebhookDead(ctx, d.WebhookHash(), at); err != nil {
		a.log.Error("reader announcements: the dead webhook could not be recorded", "err", err)
		return
	}
	a.log.Error("reader announcements stopped: READERS_WEBHOOK_URL answered 404 Unknown Webhook; change it")
}

// groupDue keeps the rows due at passAt (a digest Reader's wait for their
// hour) and groups them per Series, in the order their oldest row came.
func groupDue(rows []store.Unsent, passAt time.Time) [][]store.Unsent {
	idx := map[string]int{}
	var groups [][]store.Unsent
	for _, u := range rows {
		if u.Digest && u.CreatedAt.After(lastDigest(passAt, u.DigestHour, u.Zone)) {
			continue
		}
		i, ok := idx[u.SeriesID]
		if !ok {
			i = len(groups)
			idx[u.SeriesID] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], u)
	}
	return groups
}

// lastDigest is the latest digest moment at or before now: hour o'clock in
// zone (an unknown zone is UTC). A digest Reader's row created by then is
// due.
func lastDigest(now time.Time, hour int, zone string) time.Time {
	loc, err := time.LoadLocation(zone)
	if err != nil || zone == "" || zone == "Local" {
		loc = time.UTC
	}
	t := now.In(loc)
	m := time.Date(t.Year(), t.Month(), t.Day(), hour, 0, 0, 0, loc)
	if m.After(t) {
		m = time.Date(t.Year(), t.Month(), t.Day()-1, hour, 0, 0, 0, loc)
	}
	return m
}

func keysOf(g []store.Unsent) []store.AnnouncementKey {
	keys := make([]store.AnnouncementKey, len(g))
	for i, u := range g {
		keys[i] = store.AnnouncementKey{ReaderID: u.ReaderID, SeriesID: u.SeriesID, Chapter: u.Chapter}
	}
	return keys
}

// only keeps the rows this process claimed.
func only(g []store.Unsent, won []store.AnnouncementKey) []store.Unsent {
	set := map[store.AnnouncementKey]bool{}
	for _, k := range won {
		k.Chapter = canonical(k.Chapter)
		set[k] = true
	}
	var out []store.Unsent
	for _, u := range g {
		if set[store.AnnouncementKey{ReaderID: u.ReaderID, SeriesID: u.SeriesID, Chapter: canonical(u.Chapter)}] {
			out = append(out, u)
		}
	}
	return out
}

func canonical(c string) string {
	if ch, ok := word.ParseChapter(c); ok {
		return string(ch)
	}
	return c
}

// announcement builds one Series' message from its claimed rows: every
// chapter, lowest first; every Reader once.
func (a *Announcer) announcement(g []store.Unsent) Announcement {
	first := g[0]
	ann := Announcement{Site: word.Site(first.Site), SeriesID: first.SeriesID, Title: first.Title, SeriesURL: first.SeriesURL}
	seenCh, seenR := map[word.Chapter]bool{}, map[string]bool{}
	var newest store.Unsent
	for _, u := range g {
		c, ok := word.ParseChapter(u.Chapter)
		if ok && !seenCh[c] {
			seenCh[c] = true
			ann.Chapters = append(ann.Chapters, c)
			if newest.Chapter == "" || c.Compare(word.Chapter(canonical(newest.Chapter))) > 0 {
				newest = u
			}
		}
		if !seenR[u.ReaderID] {
			seenR[u.ReaderID] = true
			ann.Readers = append(ann.Readers, Recipient{ReaderID: u.ReaderID, DiscordID: discordID(u.ReaderID)})
		}
	}
	slices.SortFunc(ann.Chapters, word.Chapter.Compare)
	ann.ChapterURL = newest.ChapterURL
	if a.base != "" {
		ann.BookmarkURL = a.base + "/#" + url.PathEscape("bm-"+first.Site+"-"+first.SeriesID)
		if first.HasCover {
			ann.CoverURL = a.base + "/covers/" + url.PathEscape(first.Site) + "/" + url.PathEscape(first.SeriesID)
		}
	}
	return ann
}

// discordID is a Reader's Discord user id: the Reader id when it is a
// snowflake (digits); a local Reader ("local-…") has none.
func discordID(readerID string) string {
	if readerID == "" {
		return ""
	}
	for _, r := range readerID {
		if r < '0' || r > '9' {
			return ""
		}
	}
	return readerID
}
