package poller_test

import (
	"net"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/fetch"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// TestAPlainSiteOurNetworkCannotReachWritesNoFailureRow: the real Reader
// against a closed loopback port (a refused connection) ends the Poll
// unreachable; the pass counts it, nothing was checked, no failure row is
// written and a failing Series keeps its row and its age; and a plain Lane
// never marks the browser down (docs/adr/0022, ADR 0003).
func TestAPlainSiteOurNetworkCannotReachWritesNoFailureRow(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	bases, err := fetch.ParseBaseURLs(site + "=http://" + closed)
	if err != nil {
		t.Fatal(err)
	}
	reader := fetch.NewReader(fetch.ReaderOptions{BaseURLs: bases, BrowserSites: word.BrowserSites{}, Timeout: 5 * time.Second})
	r := newRig(t)
	r.series("healthy", "failing")
	storetest.Insert(t, r.pool, storetest.Failure{Site: site, Series: "failing", Outcome: word.NotFound, FailingSince: storetest.Milli(42)})
	r.p = poller.New(r.st, reader, poller.Config{Now: r.clk.Now, Sites: []string{site}})
	t.Cleanup(r.p.Close)

	pass := r.pass()
	if pass.Counts.Of(word.Unreachable) != 2 || pass.Counts.Of(word.Errors) != 0 || pass.Checked != 0 {
		t.Fatalf("pass %+v: want 2 unreachable, none errors, none checked", pass)
	}
	if f, ok := r.failure("healthy"); ok {
		t.Errorf("a failure row was written for a Series our network could not reach: %+v", f)
	}
	if f, ok := r.failure("failing"); !ok || f.Outcome != word.NotFound || !f.FailingSince.Equal(storetest.Milli(42)) {
		t.Errorf("the failing Series' row changed: %+v present=%v", f, ok)
	}
	if !r.p.BrowserDownUntil().IsZero() {
		t.Errorf("a plain Lane's unreachable marked the browser down until %v", r.p.BrowserDownUntil())
	}
}
