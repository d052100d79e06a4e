package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
)

// fetchResult is a Site's answer, whichever route brought it.
type fetchResult struct {
	Status   int
	Header   http.Header
	Body     []byte
	Oversize bool // the body passed the cap; Body holds only the first part
}

// fetchRequest is one fetch: the address to request (after any SITE_BASE_URLS
// rewrite) and the rules its redirects must keep.
type fetchRequest struct {
	URL string
	API bool
	// Body, when not "", is POSTed as application/json (adapters.Target's
	// Body); the browser route sends it from the Site's home page
	// (postFromOrigin).
	Body    string
	Adapter adapters.Adapter
	// Base is the SITE_BASE_URLS rewrite of the Site, nil for the real Site.
	Base *url.URL
	// Ready is the CSS selector the browser route waits for, "" for none.
	Ready string
	// Cover widens the hosts a redirect may reach to the Site's cover hosts.
	Cover bool
}

// check is the gate's address check for this request's kind.
func (fr fetchRequest) check(u *url.URL) error {
	if fr.Cover {
		return checkCoverURL(fr.Adapter, u)
	}
	return checkSiteURL(fr.Adapter, u)
}

// checkRedirect applies the gate to a redirect target: with a rewrite, the
// rewritten host and (rewritten back onto it) the hosts the request may
// reach; without, those hosts over https.
func (fr fetchRequest) checkRedirect(u *url.URL) (*url.URL, error) {
	if fr.Base != nil {
		if u.Scheme == fr.Base.Scheme && hostPort(u) == hostPort(fr.Base) && u.User == nil {
			return u, nil
		}
		if fr.check(u) == nil {
			return rewriteURL(u, fr.Base), nil
		}
	}
	if err := fr.check(u); err != nil {
		return nil, &adapters.RedirectRefusedError{To: u.String(), Err: err}
	}
	return u, nil
}

type fetchRequestKey struct{}

// plainFetcher reads pages over net/http, through the gate's dialer.
type plainFetcher struct {
	client    *http.Client
	userAgent string
	maxBody   int64
	timeout   time.Duration
}

func newPlainFetcher(dial *gateDialer, o ReaderOptions) *plainFetcher {
	tr := &http.Transport{
		// No proxy: a proxy would connect on our behalf and bypass the gate's dialer.
		Proxy:                 nil,
		DialContext:           dial.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   o.ConnectTimeout,
		ResponseHeaderTimeout: o.HeaderTimeout,
		MaxIdleConns:          16,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
		// Leaving Accept-Encoding to the transport gets gzip, transparently.
	}
	c := &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			fr, ok := req.Context().Value(fetchRequestKey{}).(fetchRequest)
			if !ok {
				return fmt.Errorf("%w: redirect outside a fetch", ErrGate)
			}
			u, err := fr.checkRedirect(req.URL)
			var refused *adapters.RedirectRefusedError
			if errors.As(err, &refused) && req.Response != nil {
				refused.Status = req.Response.StatusCode
			}
			if err != nil {
				return err
			}
			req.URL, req.Host = u, ""
			return nil
		},
	}
	return &plainFetcher{client: c, userAgent: o.UserAgent, maxBody: o.MaxBody, timeout: o.Timeout}
}

func (p *plainFetcher) fetch(ctx context.Context, fr fetchRequest) (fetchResult, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	ctx = context.WithValue(ctx, fetchRequestKey{}, fr)
	method, body := http.MethodGet, io.Reader(nil)
	if fr.Body != "" {
		method, body = http.MethodPost, strings.NewReader(fr.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, fr.URL, body)
	if err != nil {
		return fetchResult{}, fmt.Errorf("%w: %v", ErrGate, err)
	}
	if fr.Body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", p.userAgent)
	req.Header.Set("Accept-Language", "en-US,en;q=0.8")
	if fr.API {
		req.Header.Set("Accept", "application/json")
	} else {
		req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return fetchResult{}, transportError(err)
	}
	defer resp.Body.Close()
	res := fetchResult{Status: resp.StatusCode, Header: resp.Header}
	res.Body, err = io.ReadAll(io.LimitReader(resp.Body, p.maxBody+1))
	if int64(len(res.Body)) > p.maxBody {
		res.Body, res.Oversize = res.Body[:p.maxBody], true
		return res, nil
	}
	if err != nil {
		return fetchResult{}, transportError(err)
	}
	return res, nil
}

// transportError shortens a client error for the log: the *url.Error wrapper
// repeats the address, which the caller already knows.
func transportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("timed out: %w", err)
	}
	return err
}

// rewriteURL puts u on base's scheme and host, keeping path, query and fragment.
func rewriteURL(u, base *url.URL) *url.URL {
	out := *u
	out.Scheme, out.Host, out.User = base.Scheme, base.Host, nil
	return &out
}
