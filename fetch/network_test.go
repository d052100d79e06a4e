package fetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/word"
)

// closedPort is a loopback port nothing listens on: bound, then closed.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// plainReaderAt reads asurascans through SITE_BASE_URLS=asurascans=base,
// the plain route only.
func plainReaderAt(t *testing.T, base string, tweak func(*ReaderOptions)) *Reader {
	t.Helper()
	bases, err := ParseBaseURLs("asurascans=" + base)
	if err != nil {
		t.Fatal(err)
	}
	o := ReaderOptions{BaseURLs: bases, BrowserSites: word.BrowserSites{}, Timeout: 5 * time.Second}
	if tweak != nil {
		tweak(&o)
	}
	return NewReader(o)
}

// TestNoAnswerFromTheNetworkIsUnreachableNotErrors: when the plain route
// never got an answer (DNS, a refused connection, TLS), the outcome is
// unreachable, not the Site's errors, and the error says where it stopped
// (docs/adr/0022). A Site that answered 5xx stays errors.
func TestNoAnswerFromTheNetworkIsUnreachableNotErrors(t *testing.T) {
	untrusted := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html></html>"))
	}))
	t.Cleanup(untrusted.Close)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	t.Cleanup(failing.Close)
	noSuchHost := func(ctx context.Context, host string) ([]netip.Addr, error) {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	cases := []struct {
		name   string
		reader func(t *testing.T) *Reader
		want   word.Outcome
		says   string
	}{
		{"a closed port is a refused connection", func(t *testing.T) *Reader {
			return plainReaderAt(t, "http://"+closedPort(t), nil)
		}, word.Unreachable, "the connection was refused"},
		{"a Site's name our resolver cannot find did not resolve", func(t *testing.T) *Reader {
			return NewReader(ReaderOptions{Resolve: noSuchHost, BrowserSites: word.BrowserSites{}, Timeout: 5 * time.Second})
		}, word.Unreachable, "could not reach asurascans.com: the name did not resolve"},
		{"a .invalid host the system resolver cannot find did not resolve", func(t *testing.T) *Reader {
			return plainReaderAt(t, "https://mangabookmark-test.invalid", nil)
		}, word.Unreachable, "the name did not resolve"},
		{"a resolver answering no addresses did not resolve", func(t *testing.T) *Reader {
			none := func(context.Context, string) ([]netip.Addr, error) { return nil, nil }
			return NewReader(ReaderOptions{Resolve: none, BrowserSites: word.BrowserSites{}, Timeout: 5 * time.Second})
		}, word.Unreachable, "the name did not resolve"},
		{"a certificate this machine does not trust is TLS failing", func(t *testing.T) *Reader {
			return plainReaderAt(t, untrusted.URL, nil)
		}, word.Unreachable, "TLS failed"},
		{"a Site answering 502 is still errors", func(t *testing.T) *Reader {
			return plainReaderAt(t, failing.URL, nil)
		}, word.Errors, "HTTP 502"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.reader(t).Read(context.Background(), "asurascans", asuraSeries)
			if got.Outcome != c.want || got.Err == nil || !strings.Contains(got.Err.Error(), c.says) {
				t.Fatalf("outcome %q err %v, want %q saying %q", got.Outcome, got.Err, c.want, c.says)
			}
			if c.want == word.Unreachable && (got.Checked || got.Status != 0) {
				t.Errorf("checked %v status %d: no answer came, so nothing was checked", got.Checked, got.Status)
			}
		})
	}
}

// TestAHeaderTimeoutAfterTheSiteAcceptedStaysErrors: a Site that took the
// connection and never answered is the Site's slowness, not our network.
func TestAHeaderTimeoutAfterTheSiteAcceptedStaysErrors(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); slow.Close() })
	r := plainReaderAt(t, slow.URL, func(o *ReaderOptions) { o.HeaderTimeout = 200 * time.Millisecond })
	got := r.Read(context.Background(), "asurascans", asuraSeries)
	if got.Outcome != word.Errors {
		t.Fatalf("outcome %q err %v, want errors", got.Outcome, got.Err)
	}
}

// TestABrowserSitesNameThatDoesNotResolveNeverMarksTheSidecarDown: on the
// browser route unreachable means the sidecar (the poller marks the browser
// down on it), so the gate's own lookup failing there stays errors.
func TestABrowserSitesNameThatDoesNotResolveNeverMarksTheSidecarDown(t *testing.T) {
	noSuchHost := func(ctx context.Context, host string) ([]netip.Addr, error) {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	r := NewReader(ReaderOptions{Resolve: noSuchHost, BrowserWSURL: "ws://127.0.0.1:1/devtools/browser/x",
		BrowserSites: word.BrowserSites{word.Asurascans: true}, Timeout: 5 * time.Second})
	got := r.Read(context.Background(), "asurascans", asuraSeries)
	if got.Outcome == word.Unreachable || errors.Is(got.Err, ErrUnreachable) {
		t.Fatalf("outcome %q err %v: a name that did not resolve is not the sidecar", got.Outcome, got.Err)
	}
}
