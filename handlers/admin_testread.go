package handlers

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// testReadTimeout bounds a Test read below the server's write timeout, so
// the owner always gets an answer, even from a Site that never replies.
const testReadTimeout = 45 * time.Second

// handleTestRead runs the real read path for this Series now (Deps.Reads:
// gate, route, the Lane's spacing) and shows what it saw. It writes nothing,
// so it says nothing to the Series' state: the next Poll does that.
func handleTestRead(d Deps) http.Handler {
	return seriesControl(d, func(r *http.Request, site, id string) controlResult {
		if d.Reads == nil {
			return controlResult{status: http.StatusServiceUnavailable, refusal: "Test read is not available on this server."}
		}
		s, err := d.Store.GetAdminSeries(r.Context(), site, id, d.now())
		if errors.Is(err, store.ErrNotFound) {
			return controlResult{status: http.StatusNotFound}
		}
		if err != nil {
			return storeResult(d, "test read", err, "")
		}
		ctx, cancel := context.WithTimeout(r.Context(), testReadTimeout)
		defer cancel()
		res := d.Reads.TestRead(ctx, site, s.URL)
		d.Logger.Info("test read", "site", site, "series_id", id, "outcome", res.Outcome, "status", res.Status)
		view := testReadView(res, site, d.browserSite(site))
		return controlResult{status: http.StatusOK, adjust: func(v *components.SeriesDetail) { v.TestRead = &view }}
	})
}

// testReadView is what a Test read shows: the facts `mangabookmark fetch`
// prints, every one of them text (page-derived, escaped by templ, never a
// link).
func testReadView(res adapters.Result, site string, browser bool) components.TestRead {
	w, _ := outcomeWordOn(res.Outcome, site, browser)
	v := components.TestRead{Word: string(res.Outcome), Plain: res.Outcome.PlainOn(routeOf(browser)), Fault: res.Outcome != word.OK,
		Meaning: w.meaning}
	var redirect *adapters.RedirectRefusedError
	switch {
	case res.Status > 0:
		v.Status = "HTTP " + strconv.Itoa(res.Status)
	case errors.As(res.Err, &redirect):
		// The Site answered; the request refused was the redirect's.
		v.Status, v.Meaning = "a redirect the fetch gate refused", redirectRefusedMeaning
		if redirect.Status > 0 {
			v.Status = "HTTP " + strconv.Itoa(redirect.Status) + ": " + v.Status
		}
	default:
		v.Status = "no HTTP answer (" + errorClass(res.Outcome, browser) + ")"
	}
	if res.Err != nil {
		v.Error = res.Err.Error()
	}
	f := res.Facts
	latest := "none"
	if f.HasLatest {
		latest = f.LatestChapter
	}
	completed := "no"
	if f.Completed {
		completed = "yes"
	}
	v.Facts = []components.Option{
		{Value: "title", Label: f.Title}, {Value: "latest_chapter", Label: latest},
		{Value: "latest_chapter_url", Label: f.LatestChapterURL}, {Value: "cover_url", Label: f.CoverURL},
		{Value: "kind", Label: string(f.Kind)}, {Value: "completed", Label: completed},
	}
	return v
}

// errorClass names where a read without an HTTP answer stopped.
func errorClass(o word.Outcome, browser bool) string {
	switch {
	case o == word.Unfetchable:
		return "the fetch gate refused the address"
	case o == word.Unreachable && browser:
		return "the browser sidecar"
	case o == word.Unreachable:
		return "our network: DNS, the connection or TLS"
	case o == word.Refused:
		return "a challenge"
	}
	return "a dropped connection, a timeout or the page itself"
}
