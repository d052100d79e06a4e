package poller_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/fetch"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/word"
)

// standIn is a loopback NovelFull that logs when every request arrived:
// its latest-release listing over two pages, a Series page for each id,
// and their covers.
type standIn struct {
	ids    []string
	series []byte // the ongoing fixture, its Series' id to be replaced

	mu  sync.Mutex
	log []hit
}

type hit struct {
	at   time.Time
	path string
}

func (s *standIn) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	s.mu.Lock()
	s.log = append(s.log, hit{at, req.URL.RequestURI()})
	s.mu.Unlock()
	p := req.URL.Path
	switch {
	case p == "/latest-release-novel":
		half := len(s.ids) * 2 / 3
		if req.URL.Query().Get("page") == "2" {
			_, _ = w.Write(listingPage(s.ids[half:], false))
		} else {
			_, _ = w.Write(listingPage(s.ids[:half], true))
		}
	case strings.HasPrefix(p, "/uploads/"):
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(pngPixel)
	case strings.HasSuffix(p, ".html"):
		id := strings.TrimSuffix(strings.TrimPrefix(p, "/"), ".html")
		_, _ = w.Write(bytes.ReplaceAll(s.series, []byte("reverend-insanity"), []byte(id)))
	default:
		http.NotFound(w, req)
	}
}

func (s *standIn) hits() []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hit(nil), s.log...)
}

// listingPage is a latest-release page in the shape of the listing
// fixture (adapters/testdata/listings/novelfull): each id at chapter 2334,
// the chapter its Series page names, and a next-page link when more.
func listingPage(ids []string, more bool) []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><body><div class="container" id="list-page">
<div class="col-xs-12 col-sm-12 col-md-9 col-truyen-main archive"><div class="list list-truyen col-xs-12">`)
	for _, id := range ids {
		fmt.Fprintf(&b, `<div class="row">
 <div class="col-xs-7"><div><h3 class="truyen-title"><a href="/%[1]s.html" title="%[1]s">%[1]s</a></h3></div></div>
 <div class="col-xs-2 text-info"><div><a href="/%[1]s/chapter-2334.html" title="Chapter 2334">Chapter 2334</a></div></div>
</div>`, id)
	}
	b.WriteString(`</div><div class="text-center"><ul class="pagination pagination-sm"><li class="active"><a href="/latest-release-novel?page=1">1</a></li>`)
	if more {
		b.WriteString(`<li class="next"><a href="/latest-release-novel?page=2">&gt;</a></li>`)
	}
	b.WriteString(`</ul></div></div></div></body></html>`)
	return []byte(b.String())
}

// Politeness under a burst of listed Series (issue 20): a real Reader
// against one stand-in Site whose listing names twelve bookmarked Series
// above their Latest Chapter, beside four due by their own time, with the
// Lane running on its own clock (passes cut by LISTING_EVERY, listing
// walks, covers while it rests). The stand-in's own log never shows two
// requests closer than POLL_SPACING. Not parallel: a loaded machine delays
// a request's arrival by more than the slack allowed.
func TestPolitenessUnderABurstOfListedSeries(t *testing.T) {
	const spacing = 150 * time.Millisecond
	r := newRig(t)
	var listedIDs, dueIDs []string
	for i := 1; i <= 12; i++ {
		listedIDs = append(listedIDs, fmt.Sprintf("listed-%02d", i))
	}
	for i := 1; i <= 4; i++ {
		dueIDs = append(dueIDs, fmt.Sprintf("due-%02d", i))
	}
	r.series(append(append([]string{}, listedIDs...), dueIDs...)...)
	// Times to the millisecond, as the store writes them (the check stamp
	// is conditional on the check it read).
	now := time.Now().Truncate(time.Millisecond)
	r.exec(`UPDATE series SET latest_chapter_num = 10, checked_at = $1,
		next_read_at = CASE WHEN series_id LIKE 'due-%' THEN $2::timestamptz ELSE $3::timestamptz END`,
		now.Add(-10*time.Minute), now.Add(-time.Minute), now.Add(3*24*time.Hour))

	body, err := os.ReadFile(filepath.Join("..", "adapters", "testdata", "novelfull", "ongoing.html"))
	if err != nil {
		t.Fatal(err)
	}
	site := &standIn{ids: listedIDs, series: body}
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	bases, err := fetch.ParseBaseURLs("novelfull=" + srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	none, _ := word.ParseBrowserSites("none")
	reader := fetch.NewReader(fetch.ReaderOptions{BaseURLs: bases, BrowserSites: none})
	r.p = poller.New(r.st, reader, poller.Config{
		Sites: []string{"novelfull"}, Spacing: spacing, ListingEvery: time.Second,
		MinRest: 50 * time.Millisecond, Covers: reader, Logger: slog.New(slog.NewTextHandler(r.logs, nil)),
	})
	t.Cleanup(r.p.Close)

	stop := r.run()
	deadline := time.Now().Add(30 * time.Second)
	for !burstServed(r, site, listedIDs, dueIDs) {
		if time.Now().After(deadline) {
			stop()
			for _, h := range site.hits() {
				t.Log(h.at.Format("15:04:05.000"), h.path)
			}
			t.Log(r.logs.String())
			t.Fatalf("the burst was not served in time: %d requests", len(site.hits()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()

	// The Lane spaces its requests from when each one starts; the stand-in
	// stamps them when they arrive, and on a loaded machine running the race
	// detector an arrival lags its start by a few milliseconds (once 4 ms,
	// seen as a 146 ms gap). A request sent without spacing arrives well
	// under the spacing, so a 10 ms slack still fails on it.
	const arrivalSlack = 10 * time.Millisecond
	hits := site.hits()
	for i := 1; i < len(hits); i++ {
		if gap := hits[i].at.Sub(hits[i-1].at); gap < spacing-arrivalSlack {
			t.Errorf("%s came %v after %s: closer than the spacing %v", hits[i].path, gap, hits[i-1].path, spacing)
		}
	}
	for _, id := range listedIDs {
		s := r.get(id)
		if s.LatestChapter == nil || *s.LatestChapter != "2334" {
			t.Errorf("%s: latest %v, want the listed 2334 confirmed", id, s.LatestChapter)
		}
		if a := r.arrivals(id); len(a) != 1 || !a[0].Listed {
			t.Errorf("%s: arrivals %+v, want one the listing noticed", id, a)
		}
	}
}

// burstServed reports whether the stand-in has seen every listed and due
// Series read, the listing read again after the burst, and a cover.
func burstServed(r *rig, site *standIn, listed, due []string) bool {
	seen := map[string]int{}
	for _, h := range site.hits() {
		switch {
		case strings.HasPrefix(h.path, "/latest-release-novel"):
			seen["listing"]++
		case strings.HasPrefix(h.path, "/uploads/"):
			seen["cover"]++
		default:
			seen[h.path]++
		}
	}
	for _, id := range append(append([]string{}, listed...), due...) {
		if seen["/"+id+".html"] == 0 {
			return false
		}
	}
	return seen["listing"] >= 3 && seen["cover"] >= 2
}
