package handlers

import (
	"errors"
	"net/http"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// detailOf builds the detail view model.
func detailOf(d Deps, r *http.Request, site, id string) (components.SeriesDetail, error) {
	ctx, now := r.Context(), d.now()
	var s store.AdminSeriesDetail
	var bms []store.SeriesBookmark
	b := d.Store.NewBatch()
	b.AdminSeries(site, id, now, &s)
	b.SeriesBookmarks(site, id, &bms)
	if err := d.Store.Send(ctx, b); err != nil {
		return components.SeriesDetail{}, err
	}
	v := components.SeriesDetail{
		Site: s.Site, ID: s.SeriesID, Title: adapters.DisplayName(s.Title, s.URL, s.SeriesID), Cover: coverSrc(s.Site, s.SeriesID, s.CoverTried), Address: s.URL, AddressHref: webURL(s.URL),
		Base: seriesHref(s.Site, s.SeriesID), Fact: factOf(s.AdminSeries, now),
		Raised: s.LatestRaisedBy != nil, Unverified: s.Unverified, Finished: !s.FinishedAt.IsZero(),
		Orphan: s.Bookmarks == 0, CanTestRead: d.Reads != nil,
	}
	if s.LatestChapter != nil {
		v.Latest = *s.LatestChapter
	}
	if !s.SiteCompletedAt.IsZero() && s.FinishedAt.IsZero() {
		v.Hint = s.Site + " marks this work completed (seen by the read " + ago(now, s.SiteCompletedAt) + ")."
	}
	// Pending until the Lane clears the request, which it does once a read
	// of the Series has finished (CONTEXT.md, Forced Poll): the check stamp
	// moves as a read starts, so it cannot say the read is done.
	if !s.ForcePollAt.IsZero() {
		if err := pendingOn(d, r, &v, ago(now, s.ForcePollAt)); err != nil {
			return components.SeriesDetail{}, err
		}
	}
	v.Outcome = outcomeNote(s, d.browserSite(s.Site), now)
	for _, b := range bms {
		row := components.BookmarkRow{Reader: b.ReaderName, Progress: "no Progress yet", Updated: "never updated"}
		if b.ReaderName == "" {
			row.Reader = b.ReaderID
		}
		if b.Progress != nil {
			row.Progress = "ch. " + *b.Progress
		}
		if !b.UpdatedAt.IsZero() {
			row.Updated = "updated " + ago(now, b.UpdatedAt)
		}
		v.Bookmarks = append(v.Bookmarks, row)
	}
	return v, nil
}

// pendingOn shows a Forced Poll not yet served, with why it waits when its
// Lane's state says (laneView.waitsOn). It asks again only while a pass may
// serve it: a Lane that cannot poll changes only when the owner acts.
func pendingOn(d Deps, r *http.Request, v *components.SeriesDetail, asked string) error {
	v.ForcePending = asked
	l, _, err := laneViewOf(d, r, v.Site)
	if err != nil {
		return err
	}
	v.ForceWaits = l.waitsOnFix()
	if l.cannotPoll() == "" {
		v.Live = v.Base + "/poll-state?was=pending"
	}
	return nil
}

// readDetail reads the Series the route names for a detail answer, or
// answers the failure itself: 404 for no such Series, the store's sentence
// for a failed read (logged as what, with the Series).
func readDetail(d Deps, w http.ResponseWriter, r *http.Request, what string) (components.SeriesDetail, bool) {
	site, id := urlParam(r, "site"), urlParam(r, "id")
	v, err := detailOf(d, r, site, id)
	if errors.Is(err, store.ErrNotFound) {
		fail(w, r, d.Logger, http.StatusNotFound, "There is no such Series.")
		return v, false
	}
	if err != nil {
		failStore(w, r, d.Logger, err, "The Series could not be read. Try again.", what, "site", site, "series_id", id)
		return v, false
	}
	return v, true
}

// showDetail renders the detail page, or for htmx its region, after letting
// adjust set a message or a step.
func showDetail(d Deps, w http.ResponseWriter, r *http.Request, status int, adjust func(*components.SeriesDetail)) {
	v, ok := readDetail(d, w, r, "admin series: detail")
	if !ok {
		return
	}
	if adjust != nil {
		adjust(&v)
	}
	if wantsFragment(r) {
		render(w, r, d.Logger, status, components.SeriesDetailRegion(v))
		return
	}
	render(w, r, d.Logger, status, components.AdminDetailPage(viewerFrom(r.Context()), v))
}

func handleAdminSeriesDetail(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		showDetail(d, w, r, http.StatusOK, nil)
	})
}

// seriesControl is the shape of every detail control: parse the form, let
// act validate and write, then answer htmx with the changed region and a
// plain browser with a 303 back to the page. act's result carries a refusal
// (status and sentence) when nothing was changed.
func seriesControl(d Deps, act func(r *http.Request, site, id string) controlResult) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, maxFormBody) {
			return
		}
		site, id := urlParam(r, "site"), urlParam(r, "id")
		res := act(r, site, id)
		if res.status == http.StatusNotFound {
			fail(w, r, d.Logger, http.StatusNotFound, "There is no such Series.")
			return
		}
		if res.status >= 500 {
			fail(w, r, d.Logger, res.status, res.refusal)
			return
		}
		if res.refusal != "" || res.status != 0 {
			status := res.status
			if status == 0 {
				status = http.StatusOK
			}
			showDetail(d, w, r, status, func(v *components.SeriesDetail) {
				v.Message, v.Fault = res.refusal, res.refusal != "" && status >= 400
				if res.adjust != nil {
					res.adjust(v)
				}
			})
			return
		}
		if res.moved != "" {
			to := seriesHref(site, res.moved)
			if wantsFragment(r) {
				w.Header().Set("HX-Redirect", to)
				w.WriteHeader(http.StatusOK)
				return
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		if !wantsFragment(r) {
			http.Redirect(w, r, seriesHref(site, id), http.StatusSeeOther)
			return
		}
		showDetail(d, w, r, http.StatusOK, func(v *components.SeriesDetail) { v.Message = res.done })
	})
}

func handleFinish(d Deps) http.Handler {
	return seriesControl(d, func(r *http.Request, site, id string) controlResult {
		confirmStep := func(v *components.SeriesDetail) { v.ConfirmFinish = true }
		if r.PostForm.Get("step") != "confirm" {
			// Step one: the second step, never pre-ticked, in place of the control.
			return controlResult{status: http.StatusOK, adjust: confirmStep}
		}
		if r.PostForm.Get("confirm") != "yes" {
			return controlResult{status: http.StatusUnprocessableEntity, refusal: "Tick the box to confirm, or cancel. The Series was not finished.", adjust: confirmStep}
		}
		return storeResult(d, "finish", d.Store.FinishSeries(r.Context(), site, id, d.now()), "Finished: it is no longer polled.")
	})
}

func handleUnfinish(d Deps) http.Handler {
	return seriesControl(d, func(r *http.Request, site, id string) controlResult {
		return storeResult(d, "unfinish", d.Store.UnfinishSeries(r.Context(), site, id), "Un-finished: it is due for a Poll again.")
	})
}

// handleCorrectLatest sets Latest Chapter to the owner's number, kept in
// the same canonical form a Poll writes ("012.50" is 12.5).
func handleCorrectLatest(d Deps) http.Handler {
	return seriesControl(d, func(r *http.Request, site, id string) controlResult {
		c, ok := word.ParseChapter(r.PostForm.Get("num"))
		num := string(c)
		if !ok {
			// Shown back cut to 16 characters, never inside one.
			keep := r.PostForm.Get("num")
			if k := []rune(keep); len(k) > 16 {
				keep = string(k[:16])
			}
			return controlResult{status: http.StatusBadRequest, refusal: "Type a chapter number such as 12 or 12.5. Latest Chapter was not changed.",
				adjust: func(v *components.SeriesDetail) { v.Correction = keep }}
		}
		return storeResult(d, "correct latest", d.Store.CorrectLatestChapter(r.Context(), site, id, num), "Latest Chapter corrected to "+num+".")
	})
}

func handleClearAttribution(d Deps) http.Handler {
	return seriesControl(d, func(r *http.Request, site, id string) controlResult {
		return storeResult(d, "clear attribution", d.Store.ClearAttribution(r.Context(), site, id), "Attribution cleared.")
	})
}

func handleForceSeriesPoll(d Deps) http.Handler {
	return seriesControl(d, func(r *http.Request, site, id string) controlResult {
		if no, ok := refusePoll(d, r, site); !ok {
			return no
		}
		return storeResult(d, "force poll", d.Store.ForceSeriesPoll(r.Context(), site, id, d.now()), "Poll requested.")
	})
}

// refusePoll is the answer to a Forced Poll, of a Series or a Lane, that
// no pass would serve until the owner acts (laneView.refusal): it is never
// written, so nothing waits on a Lane that will not come. ok is true when
// the request may be queued.
func refusePoll(d Deps, r *http.Request, site string) (controlResult, bool) {
	v, found, err := laneViewOf(d, r, site)
	switch {
	case err != nil:
		return storeResult(d, "force poll: lane state", err, ""), false
	case !found:
		return controlResult{}, true // the write answers for a Lane that is not there
	}
	if no := v.refusal(); no != "" {
		return controlResult{status: http.StatusUnprocessableEntity, refusal: no}, false
	}
	return controlResult{}, true
}

// handleDeleteSeries deletes a Series (issue 24, item 1). An orphan goes
// at the first POST: the database's orphan guard refuses it if a Bookmark
// arrived meanwhile. A bookmarked Series first shows the confirm step that
// names how many Readers track it; on step=confirm with confirm=yes it goes
// with their Bookmarks, and each of them is told once on /.
func handleDeleteSeries(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, maxFormBody) {
			return
		}
		site, id := urlParam(r, "site"), urlParam(r, "id")
		confirmStep := func(v *components.SeriesDetail) { v.ConfirmDelete = true }
		var err error
		back := "/admin/series"
		switch {
		case r.PostForm.Get("step") != "confirm":
			err = d.Store.DeleteSeries(r.Context(), site, id)
			if errors.Is(err, store.ErrBookmarked) {
				showDetail(d, w, r, http.StatusOK, confirmStep)
				return
			}
			if err == nil {
				d.Logger.Info("series deleted", "site", site, "series_id", id, "readers", 0)
				back += "?filter=orphan"
			}
		case r.PostForm.Get("confirm") != "yes":
			showDetail(d, w, r, http.StatusUnprocessableEntity, func(v *components.SeriesDetail) {
				confirmStep(v)
				v.Message, v.Fault = "Tick the box to confirm, or cancel. The Series was not deleted.", true
			})
			return
		default:
			err = removeSeries(d, r, site, id)
		}
		switch {
		case errors.Is(err, store.ErrNotFound):
			fail(w, r, d.Logger, http.StatusNotFound, "There is no such Series.")
			return
		case err != nil:
			failStore(w, r, d.Logger, err, "The Series could not be deleted. Nothing was changed; try again.", "admin control failed", "control", "delete")
			return
		}
		if wantsFragment(r) {
			w.Header().Set("HX-Redirect", back)
			w.WriteHeader(http.StatusOK)
			return
		}
		http.Redirect(w, r, back, http.StatusSeeOther)
	})
}

// removeSeries deletes a Series with its Bookmarks, under the title its
// Readers saw on their rows.
func removeSeries(d Deps, r *http.Request, site, id string) error {
	s, err := d.Store.GetSeries(r.Context(), site, id)
	if err != nil {
		return err
	}
	n, err := d.Store.RemoveSeries(r.Context(), site, id, adapters.DisplayName(s.Title, s.URL, s.SeriesID), d.now())
	if err == nil {
		d.Logger.Info("series deleted", "site", site, "series_id", id, "readers", n)
	}
	return err
}

// outcomeNote explains the last outcome on the detail page: unreachable
// when the pass that held the last Poll reached nothing (it writes no
// failure row, and it is the newer fact: docs/adr/0022), else the failure
// row's word when there is one, else a healthy read; nil before any Poll.
func outcomeNote(s store.AdminSeriesDetail, browser bool, now time.Time) *components.OutcomeNote {
	orphan := s.Bookmarks == 0
	if s.Unreached {
		w, _ := outcomeWordOn(word.Unreachable, s.Site, browser)
		return &components.OutcomeNote{Word: string(word.Unreachable), Plain: word.Unreachable.PlainOn(routeOf(browser)), Meaning: w.meaning,
			Action: w.action, Fault: true}
	}
	if s.FailureOutcome == "" {
		if s.CheckedAt.IsZero() {
			return nil
		}
		w := outcomeWords[word.OK]
		return &components.OutcomeNote{Word: string(word.OK), Plain: word.OK.Plain(), Meaning: w.meaning, Action: w.action}
	}
	w, ok := outcomeWords[s.FailureOutcome]
	if !ok {
		w = outcomeWord{meaning: "An outcome this page does not know.", action: "Try Test read to see what the adapter sees."}
	}
	action := w.action
	if orphan && (s.FailureOutcome == word.NotFound || s.FailureOutcome == word.Unfetchable) {
		action += " No Reader bookmarks it, so deleting it loses nothing."
	}
	return &components.OutcomeNote{Word: string(s.FailureOutcome), Plain: s.FailureOutcome.Plain(), Meaning: w.meaning, Action: action,
		Age: since(now, s.FailingSince), Fault: true}
}

// handleAdminPollState is the detail page's live Poll section: asked again
// while a Forced Poll waits, it says what the Poll found once it was served
// (and brings the fact line and the outcome note with it).
func handleAdminPollState(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !wantsFragment(r) {
			http.Redirect(w, r, seriesHref(urlParam(r, "site"), urlParam(r, "id")), http.StatusSeeOther)
			return
		}
		v, ok := readDetail(d, w, r, "admin series: poll state")
		if !ok {
			return
		}
		if r.URL.Query().Get("was") == "pending" && v.ForcePending == "" {
			v.PollServed = "The requested Poll was served: " + v.Fact.Checked + "."
			if v.Outcome != nil {
				v.PollServed = "The requested Poll was served (" + v.Fact.Checked + "): " + v.Outcome.Plain + "."
			}
		}
		render(w, r, d.Logger, http.StatusOK, components.PollStateLive(v))
	})
}

// handleCorrectAddress sets a Series' address (issue 24, item 2): the
// address must be recognised as a Series of the same Site and pass the fetch
// gate's address rules. Another Series at that address takes this one's
// Bookmarks (store.CorrectAddress). The failure row stays until a read
// succeeds, as for any read (CONTEXT.md, Fetch gate).
func handleCorrectAddress(d Deps) http.Handler {
	return seriesControl(d, func(r *http.Request, site, id string) controlResult {
		raw := adapters.Pasted(r.PostForm.Get("url"))
		ref, err := adapters.Recognise(raw)
		if err != nil || ref.Site != site {
			return controlResult{status: http.StatusUnprocessableEntity, refusal: "That is not the address of a Series on " + site + ". The address was not changed."}
		}
		if err := adapters.CheckSiteAddress(site, ref.URL); err != nil {
			return controlResult{status: http.StatusUnprocessableEntity, refusal: "That address would not be fetched (" + err.Error() + "). The address was not changed."}
		}
		res := storeResult(d, "correct address", d.Store.CorrectAddress(r.Context(), site, id, ref.SeriesID, ref.URL, d.now()), "Address corrected; the next Poll reads it.")
		if res.status == 0 && ref.SeriesID != id {
			// This id is gone: the page to show is the Series that took it in.
			res.moved = ref.SeriesID
		}
		return res
	})
}
