package metrics

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// This file holds the domain metrics (issue 25, item 5): what the Lanes,
// the owner notices and the Reader announcements did, counted as it
// happens, and the figures the owner's pages show, read from the database
// at scrape time. Every label value is a word of package word (a Site, a
// Skip value, an Outcome, a notice kind, a channel, a send result), never a
// Series id or an address, so each family has a fixed, small set of series.

// DomainStore is what the scrape-time gauges read; *store.Store satisfies it.
type DomainStore interface {
	NewBatch() *store.Batch
	Send(ctx context.Context, b *store.Batch) error
}

// DomainOptions configures NewDomain; the zero value is the defaults.
type DomainOptions struct {
	// Now is the clock the oldest check's age and the lists' filters are
	// read at: the server's (the demo's runs ahead). nil is time.Now.
	Now func() time.Time
	// Logger takes the one WARN line of a scrape whose database read
	// failed; nil logs nothing.
	Logger *slog.Logger
	// Timeout bounds the scrape's database read; zero is DefaultScrapeTimeout.
	Timeout time.Duration
}

// DefaultScrapeTimeout bounds the gauges' database read: a scrape that
// waits longer gets the counters without the gauges.
const DefaultScrapeTimeout = 2 * time.Second

// DetectionBuckets are the detection delay's histogram buckets, in
// seconds: from a minute (a Lane reading its listing every few minutes) to
// four days (a Series read only at its cadence).
var DetectionBuckets = []float64{60, 120, 300, 600, 1800, 3600, 2 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 4 * 86400}

// Domain counts what the Lanes, the owner notices and the Reader
// announcements do, and reads the pages' figures when scraped. It is the
// Observer of poller, notify and announce; a nil *Domain observes nothing.
type Domain struct {
	passes, polls, noticeSends, announcements *prometheus.CounterVec
	delay                                     *prometheus.HistogramVec
	figures                                   *figures
}

// NewDomain registers the domain metrics on reg, the gauges reading st.
func NewDomain(reg prometheus.Registerer, st DomainStore, o DomainOptions) (*Domain, error) {
	if st == nil {
		return nil, errors.New("metrics: no store")
	}
	d := &Domain{
		passes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mangabookmark_passes_total",
			Help: "Passes of each Site's Lane, by the Skip value the pass log records (none: the pass ran)."},
			[]string{"site", "skip"}),
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mangabookmark_polls_total",
			Help: "Polls of each Site's Series, by the Outcome each ended in."}, []string{"site", "outcome"}),
		delay: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "mangabookmark_detection_delay_seconds",
			Help:    "Detection delay of each new chapter a Poll confirmed (confirmed − first noticed: the Listing's or a Sighting's first sight, else the read before), the Lanes page's freshness figure.",
			Buckets: DetectionBuckets}, []string{"site"}),
		noticeSends: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mangabookmark_notice_sends_total",
			Help: "Owner notices posted to the Discord webhook, by what Discord's answer came to."}, []string{"result"}),
		announcements: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mangabookmark_announcement_sends_total",
			Help: "Reader announcements sent, one per Reader a message was for, by channel and what the answer came to."},
			[]string{"channel", "result"}),
		figures: newFigures(st, o),
	}
	d.zero()
	for _, c := range []prometheus.Collector{d.passes, d.polls, d.delay, d.noticeSends, d.announcements, d.figures} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// zero creates every series at 0, so a rate over a Site's first Polls or a
// first 429 starts from a sample instead of from nothing.
func (d *Domain) zero() {
	for _, site := range word.SiteNames() {
		for _, s := range word.Skips {
			d.passes.WithLabelValues(site, skipLabel(s))
		}
		for _, o := range word.Outcomes {
			d.polls.WithLabelValues(site, string(o))
		}
		d.delay.WithLabelValues(site)
	}
	for _, r := range word.SendResults {
		d.noticeSends.WithLabelValues(string(r))
		for _, ch := range announceChannels {
			d.announcements.WithLabelValues(string(ch), string(r))
		}
	}
}

// announceChannels are the channels that send (the feed is read, not sent).
var announceChannels = []word.Channel{word.ChannelDiscord, word.ChannelPush}

// unknownLabel stands for a word outside its set, which no caller should
// pass: the label set stays bounded whatever comes.
const unknownLabel = "unknown"

// skipLabel is s as the skip label: "none" for a pass that ran.
func skipLabel(s word.Skip) string {
	switch {
	case s == word.SkipNone:
		return "none"
	case slices.Contains(word.Skips, s):
		return string(s)
	}
	return unknownLabel
}

// siteLabel is site as the site label.
func siteLabel(site string) string {
	if word.KnownSite(site) {
		return site
	}
	return unknownLabel
}

// Passed counts one pass and its Polls (poller.Observer).
func (d *Domain) Passed(site string, skip word.Skip, polls word.Counts) {
	if d == nil {
		return
	}
	site = siteLabel(site)
	d.passes.WithLabelValues(site, skipLabel(skip)).Inc()
	for _, o := range word.Outcomes {
		if n := polls.Of(o); n > 0 {
			d.polls.WithLabelValues(site, string(o)).Add(float64(n))
		}
	}
}

// Detected observes one Arrival's detection delay (poller.Observer).
func (d *Domain) Detected(site string, delay time.Duration) {
	if d == nil {
		return
	}
	d.delay.WithLabelValues(siteLabel(site)).Observe(max(delay, 0).Seconds())
}

// NoticeSent counts one owner notice posted (notify.Observer).
func (d *Domain) NoticeSent(r word.SendResult) {
	if d == nil {
		return
	}
	d.noticeSends.WithLabelValues(resultLabel(r)).Inc()
}

// Announced counts one Reader's delivery on ch (announce.Observer).
func (d *Domain) Announced(ch word.Channel, r word.SendResult) {
	if d == nil {
		return
	}
	c := unknownLabel
	if slices.Contains(announceChannels, ch) {
		c = string(ch)
	}
	d.announcements.WithLabelValues(c, resultLabel(r)).Inc()
}

func resultLabel(r word.SendResult) string {
	if slices.Contains(word.SendResults, r) {
		return string(r)
	}
	return unknownLabel
}

// figures is the Collector of the gauges read at scrape time: the figures
// the Lanes page and /admin show, by the same bounded statements, sent in
// one round trip under a short timeout. A failed read leaves the gauges out
// of that scrape (the counters still go), logs one WARN line and counts
// mangabookmark_scrape_errors_total.
type figures struct {
	st      DomainStore
	now     func() time.Time
	log     *slog.Logger
	timeout time.Duration

	due, check, neverRead, oldest, failing, notices *prometheus.Desc
	errors                                          prometheus.Counter
}

func newFigures(st DomainStore, o DomainOptions) *figures {
	f := &figures{st: st, now: o.Now, log: o.Logger, timeout: o.Timeout,
		due: prometheus.NewDesc("mangabookmark_series_due",
			"Series the newest pass of each Site's Lane found due (the Lanes page's last-pass due; 0 for a pass that skipped).",
			[]string{"site"}, nil),
		// A check is a Poll attempted; a read is one that reached the page
		// (CONTEXT.md, Check and Read). The figure the Lanes keep is the
		// check, and "never read" is its own count, as /admin shows it.
		check: prometheus.NewDesc("mangabookmark_oldest_check_age_seconds",
			"Age of the oldest check (a Poll attempted, whether it reached the page or not) among each Site's Series that are not Finished and have an address; +Inf when one was never checked, absent when the Site has none.",
			[]string{"site"}, nil),
		neverRead: prometheus.NewDesc("mangabookmark_series_never_read",
			"Series per Site that no Poll has reached (the owner's never-read filter): never checked, or checked only by refused or unreachable Polls; counted as the pages count it, exact up to 1000, 1001 meaning more.",
			[]string{"site"}, nil),
		// Kept one release under its old name (ADR 0028, Renames): its
		// +Inf now keeps its promise; its finite value was always the
		// oldest check.
		oldest: prometheus.NewDesc("mangabookmark_oldest_read_age_seconds",
			"Deprecated, removed in the next release: use mangabookmark_oldest_check_age_seconds and mangabookmark_series_never_read. +Inf while a Series of the Site was never read, else the oldest check's age; absent when the Site has no Series that is not Finished and has an address.",
			[]string{"site"}, nil),
		failing: prometheus.NewDesc("mangabookmark_series_failing",
			"Series failing per Site by the owner's failing filter; counted as the pages count it, exact up to 1000, 1001 meaning more.",
			[]string{"site"}, nil),
		notices: prometheus.NewDesc("mangabookmark_owner_notices_open",
			"Owner notices open (told or still pending), by kind.", []string{"kind"}, nil),
		errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "mangabookmark_scrape_errors_total",
			Help: "Scrapes whose database read failed; their database gauges were left out."}),
	}
	if f.now == nil {
		f.now = time.Now
	}
	if f.log == nil {
		f.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if f.timeout <= 0 {
		f.timeout = DefaultScrapeTimeout
	}
	return f
}

// Describe implements prometheus.Collector.
func (f *figures) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{f.due, f.check, f.neverRead, f.oldest, f.failing, f.notices} {
		ch <- d
	}
	f.errors.Describe(ch)
}

// read is one scrape's figures.
type read struct {
	due     map[string]int64
	reads   map[string]store.Freshness
	failing []int64 // in word.Sites' order
	unread  []int64 // in word.Sites' order
	notices []store.NoticeState
}

// read sends the figures' statements in one round trip: each Site's failing
// and never-read counts (the lists' capped counts, ADR 0009), the oldest checks
// (store.OldestChecks), the newest passes' due (store.NewestDue) and the open
// notices (at most 19 rows).
func (f *figures) read(now time.Time) (read, error) {
	r := read{due: map[string]int64{}, reads: map[string]store.Freshness{}, failing: make([]int64, len(word.Sites)),
		unread: make([]int64, len(word.Sites))}
	b := f.st.NewBatch()
	for i, site := range word.SiteNames() {
		if err := b.CountAdminSeries(store.SeriesQuery{Filter: store.FilterFailing, Site: site}, now, &r.failing[i]); err != nil {
			return read{}, err
		}
		if err := b.CountAdminSeries(store.SeriesQuery{Filter: store.FilterNeverChecked, Site: site}, now, &r.unread[i]); err != nil {
			return read{}, err
		}
	}
	b.OldestChecks(word.SiteNames(), r.reads)
	b.NewestDue(word.SiteNames(), r.due)
	b.Notices(&r.notices)
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	return r, f.st.Send(ctx, b)
}

// Collect implements prometheus.Collector.
func (f *figures) Collect(ch chan<- prometheus.Metric) {
	defer f.errors.Collect(ch)
	now := f.now()
	r, err := f.read(now)
	if err != nil {
		f.errors.Inc()
		f.log.Warn("metrics: the database figures were left out of this scrape", "err", err)
		return
	}
	for i, site := range word.SiteNames() {
		ch <- prometheus.MustNewConstMetric(f.failing, prometheus.GaugeValue, float64(r.failing[i]), site)
		ch <- prometheus.MustNewConstMetric(f.due, prometheus.GaugeValue, float64(r.due[site]), site)
		ch <- prometheus.MustNewConstMetric(f.neverRead, prometheus.GaugeValue, float64(r.unread[i]), site)
		if fr := r.reads[site]; fr.Pollable {
			age := math.Inf(1)
			if !fr.NeverChecked() {
				age = max(now.Sub(fr.OldestCheck), 0).Seconds()
			}
			ch <- prometheus.MustNewConstMetric(f.check, prometheus.GaugeValue, age, site)
			if r.unread[i] > 0 {
				age = math.Inf(1)
			}
			ch <- prometheus.MustNewConstMetric(f.oldest, prometheus.GaugeValue, age, site)
		}
	}
	open := map[word.NoticeKind]int{}
	for _, n := range r.notices {
		open[n.Kind]++
	}
	for _, k := range word.NoticeKinds {
		ch <- prometheus.MustNewConstMetric(f.notices, prometheus.GaugeValue, float64(open[k]), string(k))
	}
}
