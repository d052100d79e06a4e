package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/word"
)

// DefaultUserAgent names the project, so a Site's operator can tell who calls.
const DefaultUserAgent = "mangabookmark/1.0 (self-hosted bookmark poller; +https://github.com/mangabookmark/mangabookmark)"

// ReaderOptions configures a Reader. The zero value reads every Site over plain
// HTTPS with the defaults below and no browser.
type ReaderOptions struct {
	// BaseURLs is SITE_BASE_URLS (see ParseBaseURLs): per Site, the scheme and
	// host its addresses are rewritten to when fetching. Stored addresses keep the
	// real host. It is the only way a loopback or private address passes the gate.
	BaseURLs map[string]*url.URL
	// BrowserSites is BROWSER_SITES (see word.ParseBrowserSites): the Sites read
	// through the browser sidecar. nil means word.DefaultBrowserSites; an empty
	// set means none.
	BrowserSites word.BrowserSites
	// BrowserWSURL is BROWSER_WS_URL, the sidecar's DevTools address
	// (ws://host:port or ws://host:port/devtools/browser/<id>). "" means no
	// browser: Polls of browser Sites are unreachable.
	BrowserWSURL string
	// Logger receives the start-up lines (rewrites, routes). nil discards.
	Logger *slog.Logger
	// UserAgent of the plain route. Default DefaultUserAgent.
	UserAgent string
	// Timeout bounds one whole fetch (connect, headers, body; for the browser:
	// the navigation and the wait). Default 45s.
	Timeout time.Duration
	// ConnectTimeout bounds the TCP and TLS handshakes. Default 10s.
	ConnectTimeout time.Duration
	// HeaderTimeout bounds the wait for response headers. Default 20s.
	HeaderTimeout time.Duration
	// MaxBody caps a body; a longer one is the outcome errors. Default 4 MiB.
	MaxBody int64
	// ChallengeWait bounds how long the browser route waits for a challenge to
	// clear (then refused) and for the adapter's ready selector. Default 20s.
	ChallengeWait time.Duration
	// Resolve replaces the system resolver (tests). nil uses the system's.
	Resolve Resolver
	// Now replaces time.Now (tests of Retry-After dates).
	Now func() time.Time
	// Spacing, when positive, is the least time between the starts of two
	// requests to one Site: Read waits for its turn (or for ctx). 0 leaves
	// pacing to the caller (the Lane).
	Spacing time.Duration
}

func (o *ReaderOptions) defaults() {
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Timeout <= 0 {
		o.Timeout = 45 * time.Second
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 20 * time.Second
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 4 << 20
	}
	if o.ChallengeWait <= 0 {
		o.ChallengeWait = 20 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.BrowserSites == nil {
		o.BrowserSites, _ = word.ParseBrowserSites(word.DefaultBrowserSites)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Reader runs the read path: recognise → gate → fetch (route) → classify → parse.
// It is safe for concurrent use.
type Reader struct {
	opts    ReaderOptions
	spacing spacer
	dial    *gateDialer
	plain   *plainFetcher
	browser *browserFetcher // nil: no sidecar configured
}

// NewReader builds a Reader. It starts nothing and connects to nothing; it logs
// each SITE_BASE_URLS rewrite and each browser Site once.
func NewReader(opts ReaderOptions) *Reader {
	opts.defaults()
	trusted := map[string]bool{}
	for _, site := range slices.Sorted(maps.Keys(opts.BaseURLs)) {
		u := opts.BaseURLs[site]
		trusted[hostPort(u)] = true
		opts.Logger.Info("site base URL rewrite", "site", site, "base_url", u.String())
	}
	r := &Reader{opts: opts, dial: newGateDialer(opts.Resolve, trusted, opts.ConnectTimeout)}
	r.plain = newPlainFetcher(r.dial, opts)
	if opts.BrowserWSURL != "" {
		r.browser = newBrowserFetcher(r.dial, opts)
	}
	for _, site := range word.Sites {
		if opts.BrowserSites.Has(site) {
			opts.Logger.Info("site route", "site", site, "route", word.RouteBrowser, "sidecar", r.browser != nil)
		}
	}
	return r
}

// Route names the route a Site is read over (word.BrowserSites.Route).
func (r *Reader) Route(site string) word.Route { return r.opts.BrowserSites.Route(word.Site(site)) }

// HasBrowser reports whether a browser sidecar is configured.
func (r *Reader) HasBrowser() bool { return r.browser != nil }

// Read polls one Series once.
func (r *Reader) Read(ctx context.Context, site, seriesURL string) adapters.Result {
	a, ok := adapters.ByName(site)
	if !ok {
		return adapters.Result{Outcome: word.Unfetchable, Err: fmt.Errorf("unknown site %q", site)}
	}
	u, err := url.Parse(strings.TrimSpace(seriesURL))
	if err != nil || seriesURL == "" {
		return adapters.Result{Outcome: word.Unfetchable, Err: errors.New("the stored address is not a URL")}
	}
	ref, ok := a.Recognise(u)
	if !ok {
		if err := checkSiteURL(a, u); err != nil {
			return adapters.Result{Outcome: word.Unfetchable, Err: err}
		}
		return adapters.Result{Outcome: word.Unfetchable, Err: fmt.Errorf("the stored address is not a %s Series page", site)}
	}
	target := a.Target(ref)
	ready := ""
	if rs, ok := a.(adapters.ReadySelector); ok && !target.API {
		ready = rs.ReadySelector()
	}
	res, outcome, err := r.fetchTarget(ctx, site, a, target, ready)
	if err != nil {
		return adapters.Result{Outcome: outcome, Err: err}
	}
	return r.judge(a, ref, res)
}

// fetchTarget takes one request to a Site the way every request to it goes
// (a Poll's and a listing read's alike): the gate on the target, the
// SITE_BASE_URLS rewrite, the Site's turn (so every request counts against
// one per-Site spacing) and the Site's route. ready is the selector the
// browser route waits for. On failure it answers the outcome and why.
func (r *Reader) fetchTarget(ctx context.Context, site string, a adapters.Adapter, target adapters.Target, ready string) (fetchResult, word.Outcome, error) {
	tu, err := url.Parse(target.URL)
	if err != nil {
		return fetchResult{}, word.Unfetchable, fmt.Errorf("%w: bad target address", ErrGate)
	}
	if err := checkSiteURL(a, tu); err != nil {
		return fetchResult{}, word.Unfetchable, err
	}
	fr := fetchRequest{URL: tu.String(), API: target.API, Body: target.Body, Adapter: a, Base: r.opts.BaseURLs[site], Ready: ready}
	if fr.Base != nil {
		fr.URL = rewriteURL(tu, fr.Base).String()
	}
	browser := r.Route(site) == word.RouteBrowser
	if err := r.spacing.wait(ctx, site, r.opts.Spacing); err != nil {
		return fetchResult{}, word.Errors, fmt.Errorf("waiting for the Site's turn: %w", err)
	}
	var res fetchResult
	if browser {
		if r.browser == nil {
			return fetchResult{}, word.Unreachable, ErrNoBrowser
		}
		if fr.Base == nil {
			if err := r.dial.checkHostPublic(ctx, tu); err != nil {
				return fetchResult{}, outcomeOfError(err), err
			}
		}
		res, err = r.browser.fetch(ctx, fr)
	} else {
		res, err = r.plain.fetch(ctx, fr)
		if why := networkFault(err); why != "" {
			// No answer came: our network, or the Site's host gone from it;
			// either way not evidence about this Series (docs/adr/0022).
			return fetchResult{}, word.Unreachable, fmt.Errorf("could not reach %s: %s: %w", tu.Hostname(), why, err)
		}
	}
	if err != nil {
		return fetchResult{}, outcomeOfError(err), err
	}
	return res, "", nil
}

// judge classifies an answer and, for a page, parses it.
func (r *Reader) judge(a adapters.Adapter, ref adapters.Ref, res fetchResult) adapters.Result {
	ans, parse := r.classifyAnswer(res)
	out := adapters.Result{Outcome: ans.Outcome, Checked: ans.Checked, Status: ans.Status, RetryAfter: ans.RetryAfter, Err: ans.Err}
	if !parse {
		return out
	}
	facts, err := a.Parse(res.Body, ref)
	if err != nil {
		// A 200 that is not the Series page: the markup moved, or the Site
		// answered with something else. The Poll found no chapter.
		out.Outcome, out.Err = word.NoChapter, err
		return out
	}
	out.Facts = facts
	if !facts.HasLatest {
		out.Outcome, out.Err = word.NoChapter, errors.New("no chapter found on the page")
		return out
	}
	out.Outcome = word.OK
	return out
}

// answer is the classification of a Site's answer: the fields a Result and
// a ListingResult share.
type answer struct {
	Outcome    word.Outcome
	Checked    bool
	Status     int
	RetryAfter time.Duration
	Err        error
}

// classifyAnswer classifies an answer. parse is true when it is a page to
// parse (Checked, its outcome left to the parser); else the answer is final.
func (r *Reader) classifyAnswer(res fetchResult) (ans answer, parse bool) {
	ans.Status = res.Status
	if res.Oversize {
		ans.Outcome, ans.Checked = word.Errors, true
		ans.Err = fmt.Errorf("body larger than %d bytes", r.opts.MaxBody)
		return ans, false
	}
	v, rule := classify(res.Status, res.Header, res.Body)
	switch v {
	case verdictRefused:
		ans.Outcome = word.Refused
		ans.RetryAfter = retryAfter(res.Header, r.opts.Now())
		ans.Err = fmt.Errorf("HTTP %d: %s", res.Status, rule)
		return ans, false
	case verdictNotFound:
		ans.Outcome, ans.Checked = word.NotFound, true
		ans.Err = fmt.Errorf("HTTP %d", res.Status)
		return ans, false
	case verdictErrors:
		ans.Outcome, ans.Checked = word.Errors, true
		ans.Err = fmt.Errorf("HTTP %d: %s", res.Status, rule)
		return ans, false
	}
	ans.Checked = true
	return ans, true
}

// ErrNoBrowser is the error of a browser Site's Poll when no sidecar is configured.
var ErrNoBrowser = errors.New("no browser sidecar configured (BROWSER_WS_URL is unset)")

// ErrUnreachable is wrapped when the browser sidecar cannot be reached, or its
// connection drops mid-Poll.
var ErrUnreachable = errors.New("browser sidecar unreachable")

func outcomeOfError(err error) word.Outcome {
	switch {
	case errors.Is(err, ErrGate):
		return word.Unfetchable
	case errors.Is(err, ErrUnreachable), errors.Is(err, ErrNoBrowser):
		return word.Unreachable
	}
	return word.Errors
}

// ParseBaseURLs reads SITE_BASE_URLS: comma-separated site=URL pairs, e.g.
// "asurascans=http://127.0.0.1:9001,kagane=https://mirror.example:8443". Each
// URL is http or https with a host and nothing else (no path, query or
// user-info). An empty string is no rewrites.
func ParseBaseURLs(s string) (map[string]*url.URL, error) {
	out := map[string]*url.URL{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		site, raw, ok := strings.Cut(part, "=")
		site, raw = strings.TrimSpace(site), strings.TrimSpace(raw)
		if !ok || site == "" || raw == "" {
			return nil, fmt.Errorf("SITE_BASE_URLS: %q is not site=URL", part)
		}
		if _, known := adapters.ByName(site); !known {
			return nil, fmt.Errorf("SITE_BASE_URLS: unknown site %q", site)
		}
		if _, dup := out[site]; dup {
			return nil, fmt.Errorf("SITE_BASE_URLS: %s is given twice", site)
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("SITE_BASE_URLS: %s: %q is not an http(s) base URL", site, raw)
		}
		if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("SITE_BASE_URLS: %s: the base URL must be scheme://host[:port] only", site)
		}
		out[site] = &url.URL{Scheme: u.Scheme, Host: strings.ToLower(u.Host)}
	}
	return out, nil
}

// spacer keeps requests to one Site apart.
type spacer struct {
	mu   sync.Mutex
	next map[string]time.Time
}

// wait reserves the Site's next turn and sleeps until it comes.
func (s *spacer) wait(ctx context.Context, site string, gap time.Duration) error {
	if gap <= 0 {
		return nil
	}
	s.mu.Lock()
	if s.next == nil {
		s.next = map[string]time.Time{}
	}
	now := time.Now()
	at := s.next[site]
	if at.Before(now) {
		at = now
	}
	s.next[site] = at.Add(gap)
	s.mu.Unlock()
	return sleepCtx(ctx, at.Sub(now))
}
