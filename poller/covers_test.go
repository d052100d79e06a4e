package poller_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/fetch"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// A real 1×1 PNG.
var pngPixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// coverSite is a loopback stand-in for novelfull's image host.
// withCovers gives the rig's Poller a cover fetcher.
func (r *rig) withCovers(f poller.CoverFetcher) {
	r.with(func(c *poller.Config) { c.Covers = f })
}

func coverSite(t *testing.T, h http.HandlerFunc, timeout time.Duration) poller.CoverFetcher {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	bases, err := fetch.ParseBaseURLs("novelfull=" + srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	none, _ := word.ParseBrowserSites("none")
	return fetch.NewReader(fetch.ReaderOptions{BaseURLs: bases, BrowserSites: none, Timeout: timeout})
}

// run starts the Lanes and returns their stop, which a failing test's
// cleanup also calls (before the Poller's own Close).
func (r *rig) run() (stop func()) {
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan struct{})
	go func() { r.p.Run(ctx); close(done) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	r.t.Cleanup(stop)
	return stop
}

// coverState is what the database holds of a Series' cover.
func (r *rig) coverState(id string) (stored string, retryAt int64) {
	r.t.Helper()
	err := r.pool.QueryRow(r.ctx, `SELECT coalesce((SELECT content_type FROM covers c WHERE c.site = s.site AND c.series_id = s.series_id), ''), `+storetest.MilliOf("cover_retry_at")+`
		FROM series s WHERE site = $1 AND series_id = $2`, site, id).Scan(&stored, &retryAt)
	if err != nil {
		r.t.Fatal(err)
	}
	return stored, retryAt
}

func TestALaneFetchesCoversWhileItRestsAndKeepsOnlySmallImagesFromItsHosts(t *testing.T) {
	t.Parallel()
	var offHost atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { offHost.Add(1); _, _ = w.Write(pngPixel) }))
	t.Cleanup(other.Close)
	r := newRig(t)
	r.withCovers(coverSite(t, func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/ok.png":
			_, _ = w.Write(pngPixel)
		case "/large.jpg":
			// Declared, so the fetch refuses it without reading 2 MiB on a
			// loaded machine (fetch's own tests read an undeclared one).
			body := append([]byte{0xFF, 0xD8, 0xFF}, bytes.Repeat([]byte{1}, fetch.MaxCoverBytes)...)
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			_, _ = w.Write(body)
		case "/page.jpg":
			w.Header().Set("Content-Type", "image/jpeg")
			_, _ = w.Write([]byte("<html>not an image</html>"))
		case "/away.jpg":
			http.Redirect(w, req, other.URL+"/ok.png", http.StatusFound)
		case "/slow.jpg":
			<-req.Context().Done()
		}
	}, 2*time.Second))
	ids := []string{"ok", "large", "page", "away", "slow"}
	r.series(ids...)
	for _, id := range ids {
		ext := ".jpg"
		if id == "ok" {
			ext = ".png"
		}
		// Checked just now: the pass has nothing to poll, and the Lane rests.
		r.exec(`UPDATE series SET cover_url = $2, checked_at = $3, next_read_at = $3::timestamptz + interval '1 hour' WHERE series_id = $1`, id, "https://novelfull.com/"+id+ext, storetest.Milli(r.clk.Now().UnixMilli()))
	}
	stop := r.run()
	waitFor(t, "every cover tried", func() bool {
		n := 0
		for _, id := range ids {
			if stored, retry := r.coverState(id); stored != "" || retry > 0 {
				n++
			}
		}
		return n == len(ids)
	})
	stop()
	if stored, retry := r.coverState("ok"); stored != "image/png" || retry != 0 || r.get("ok").CoverURL == "" {
		t.Fatalf("the image: %q retry %d", stored, retry)
	}
	var body []byte
	if err := r.pool.QueryRow(r.ctx, `SELECT body FROM covers WHERE series_id = 'ok'`).Scan(&body); err != nil || !bytes.Equal(body, pngPixel) {
		t.Fatalf("stored bytes differ: %v", err)
	}
	for _, id := range ids[1:] {
		if stored, retry := r.coverState(id); stored != "" || retry != r.clk.Now().Add(poller.CoverRetry).UnixMilli() {
			t.Errorf("%s: stored %q, retry at %d", id, stored, retry)
		}
		if r.get(id).CoverTried != "" {
			t.Errorf("%s: pages would link an image that was not kept", id) // they draw the initial
		}
	}
	if offHost.Load() != 0 {
		t.Errorf("a redirect reached a host off the list")
	}
	// Covers are not Polls: the Series, checked just now, were not read.
	if len(r.rd.reads) != 0 {
		t.Errorf("the covers' Lane polled: %v", r.rd.reads)
	}
}

func TestAWakeCancelsACoverFetchInFlightAndThePollGoesFirst(t *testing.T) {
	t.Parallel()
	arrived, cancelled := make(chan struct{}, 8), make(chan struct{}, 8)
	r := newRig(t)
	r.withCovers(coverSite(t, func(w http.ResponseWriter, req *http.Request) {
		arrived <- struct{}{}
		<-req.Context().Done()
		cancelled <- struct{}{}
	}, time.Minute))
	r.series("a")
	r.exec(`UPDATE series SET cover_url = 'https://novelfull.com/slow.jpg', checked_at = $1, next_read_at = $1::timestamptz + interval '1 hour'`, storetest.Milli(r.clk.Now().UnixMilli()))
	stop := r.run()
	<-arrived
	r.clk.Advance(time.Minute)
	if err := r.st.ForceSeriesPoll(r.ctx, site, "a", r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	<-cancelled // the wake ended the cover fetch
	waitFor(t, "the forced Poll", func() bool { return r.rd.readsOf(url("a")) == 1 })
	stop()
	if stored, retry := r.coverState("a"); stored != "" || retry != 0 {
		t.Fatalf("a cancelled fetch was recorded: %q %d", stored, retry)
	}
}

func TestARefusedOrPausedLaneFetchesNoCovers(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	r := newRig(t)
	r.withCovers(coverSite(t, func(w http.ResponseWriter, _ *http.Request) { hits.Add(1); _, _ = w.Write(pngPixel) }, time.Second))
	r.series("a")
	r.exec(`UPDATE series SET cover_url = 'https://novelfull.com/a.png', checked_at = $1, next_read_at = $1::timestamptz + interval '1 hour'`, storetest.Milli(r.clk.Now().UnixMilli()))
	if err := r.st.PauseLane(r.ctx, site, r.clk.Now().Add(time.Hour), r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	stop := r.run()
	waitFor(t, "a paused pass", func() bool { return len(r.passes(site)) == 1 })
	// The Lane rests after its paused pass; resume wakes it, and the pass
	// that runs lets the covers come.
	if err := r.st.ResumeLane(r.ctx, site); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cover after the resumed pass", func() bool { s, _ := r.coverState("a"); return s != "" })
	stop()
	if n := len(r.passes(site)); n < 2 || r.passes(site)[0].Skip != "paused" {
		t.Fatalf("passes %+v", r.passes(site))
	}
	if hits.Load() != 1 {
		t.Fatalf("cover requests: %d", hits.Load())
	}
}
