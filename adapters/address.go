package adapters

import (
	"errors"
	"fmt"
	"net/url"
)

// ErrGate is wrapped by every refusal of the fetch gate (CONTEXT.md, Fetch
// gate). The gate's address rules live here, beside the Sites' hosts, so a
// caller that stores an address to be read later (the owner's address
// correction) holds it to the same rules without linking the fetcher; the
// fetcher's own refusals (a private address after resolution, too many
// redirects) wrap it too.
var ErrGate = errors.New("fetch gate")

// CheckAddress is the gate's address check, the one place its rules are
// written: the address is absolute, https, carries no user-info and names no
// port but the https port; then its host is one of the hosts of a list (or a
// subdomain of one). A Site's pages pass it with the Site's hosts, a cover
// with the Site's and its cover hosts, a browser Poll's subresource with the
// Site's and its challenge provider's (docs/adr/0006). site names the Site
// in a refusal.
func CheckAddress(u *url.URL, site string, hostLists ...[]string) error {
	switch {
	case u == nil || u.Host == "":
		return fmt.Errorf("%w: not an absolute address", ErrGate)
	case u.Scheme != "https":
		return fmt.Errorf("%w: %s is not https", ErrGate, u.Scheme)
	case u.User != nil:
		return fmt.Errorf("%w: the address carries user-info", ErrGate)
	case u.Port() != "" && u.Port() != "443":
		return fmt.Errorf("%w: port %s is not the https port", ErrGate, u.Port())
	}
	for _, hosts := range hostLists {
		if HostIn(u.Hostname(), hosts) {
			return nil
		}
	}
	return fmt.Errorf("%w: host %q does not belong to %s", ErrGate, u.Hostname(), site)
}

// CheckSiteAddress is CheckAddress for a page of the named Site, from its
// text: what the fetch gate would say of it before any request.
func CheckSiteAddress(site, raw string) error {
	a, ok := ByName(site)
	if !ok {
		return fmt.Errorf("%w: unknown Site %q", ErrGate, site)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrGate, err)
	}
	return CheckAddress(u, a.Site(), a.Domains())
}

// RedirectRefusedError is a redirect the gate refused to follow. Unlike a
// stored address the gate refuses (nothing requested), it comes after the
// first request: the Site answered it with a redirect (Status, 0 when the
// browser route followed it unseen) to To. It wraps the gate's error, so
// the Poll's outcome is unfetchable all the same; Test read says which
// request was refused.
type RedirectRefusedError struct {
	Status int
	To     string
	Err    error
}

func (e *RedirectRefusedError) Error() string {
	answer := "a redirect"
	if e.Status > 0 {
		answer = fmt.Sprintf("a redirect (HTTP %d)", e.Status)
	}
	return fmt.Sprintf("the Site answered with %s to %s, which was refused: %v; the first request was made", answer, e.To, e.Err)
}

func (e *RedirectRefusedError) Unwrap() error { return e.Err }
