package fetch

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/word"
)

// The fetch gate decides whether an address may be fetched at all. A refusal is
// the outcome unfetchable, and no request leaves the machine:
//
//   - the address is https, carries no user-info, and its host belongs to the Site;
//   - after DNS resolution every address of the host is public (checked in the
//     dialer, which then connects to the checked address, so a DNS answer cannot
//     slip a private address past it);
//   - every redirect is checked again, and there are at most maxRedirects.
//
// The one exception is SITE_BASE_URLS: the scheme and host:port an operator named
// there are dialled as given (a loopback mirror, the demo's stand-in Sites, a
// test's httptest server).

// ErrGate is wrapped by every refusal of the fetch gate: adapters.ErrGate,
// the one value, so a refusal of the address rules (adapters.CheckAddress)
// and one of the dialler are the same kind of error.
var ErrGate = adapters.ErrGate

// maxRedirects is how many redirects one fetch may follow.
const maxRedirects = 5

// Resolver looks up the addresses of a host. The default is the system resolver.
type Resolver func(ctx context.Context, host string) ([]netip.Addr, error)

func systemResolver(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// checkAddress is the gate's address rule (adapters.CheckAddress, written
// once there so the owner's address correction shares it).
func checkAddress(u *url.URL, site string, hostLists ...[]string) error {
	return adapters.CheckAddress(u, site, hostLists...)
}

// checkSiteURL is the gate's address check for one Site's pages.
func checkSiteURL(a adapters.Adapter, u *url.URL) error {
	return checkAddress(u, a.Site(), a.Domains())
}

// checkCoverURL is the gate's address check for a Site's cover: the Site's
// own hosts widened by the image hosts it serves its covers from.
func checkCoverURL(a adapters.Adapter, u *url.URL) error {
	return checkAddress(u, a.Site(), a.Domains(), adapters.CoverHosts(a))
}

// publicAddr is the gate's one address rule, kept in word so that the Web
// Push sender (package announce) keeps the same rule without importing fetch.
func publicAddr(ip netip.Addr) bool { return word.PublicAddr(ip) }

// gateDialer dials only public addresses, except the host:ports the operator
// trusted through SITE_BASE_URLS.
type gateDialer struct {
	resolve Resolver
	trusted map[string]bool // "host:port" of each SITE_BASE_URLS entry
	dialer  net.Dialer
}

func newGateDialer(resolve Resolver, trusted map[string]bool, connectTimeout time.Duration) *gateDialer {
	if resolve == nil {
		resolve = systemResolver
	}
	return &gateDialer{resolve: resolve, trusted: trusted, dialer: net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}}
}

// DialContext resolves addr, refuses it unless every address is public, and
// connects to a checked address (never re-resolving).
func (g *gateDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if g.trusted[strings.ToLower(addr)] {
		return g.dialer.DialContext(ctx, network, addr)
	}
	ips, port, err := g.checkAddr(ctx, addr)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for _, ip := range ips {
		c, err := g.dialer.DialContext(ctx, network, netip.AddrPortFrom(ip, port).String())
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// checkAddr resolves host:port and returns its addresses only if all are public.
func (g *gateDialer) checkAddr(ctx context.Context, addr string) ([]netip.Addr, uint16, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrGate, err)
	}
	port, err := net.LookupPort("tcp", portStr)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: bad port %q", ErrGate, portStr)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		ips, err = g.resolve(ctx, host)
		if err != nil {
			// A failed lookup is a transport error (the Site vanished from DNS),
			// not a gate refusal.
			return nil, 0, fmt.Errorf("resolve %s: %w", host, err)
		}
		if len(ips) == 0 {
			return nil, 0, fmt.Errorf("resolve %s: %w", host, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true})
		}
	}
	for _, ip := range ips {
		if !publicAddr(ip) {
			return nil, 0, fmt.Errorf("%w: %s resolves to non-public address %s", ErrGate, host, ip)
		}
	}
	return ips, uint16(port), nil
}

// checkHostPublic is the gate's address check for the browser route, where the
// sidecar resolves and connects on its own: the host must resolve to public
// addresses here. (The sidecar may resolve differently; see browser.go.)
func (g *gateDialer) checkHostPublic(ctx context.Context, u *url.URL) error {
	port := u.Port()
	if port == "" {
		port = "443"
	}
	_, _, err := g.checkAddr(ctx, net.JoinHostPort(u.Hostname(), port))
	return err
}

// hostPort is u's host:port with the scheme's default port filled in, lowercased.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return strings.ToLower(net.JoinHostPort(u.Hostname(), port))
}
