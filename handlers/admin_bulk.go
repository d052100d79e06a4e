package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// maxBulk bounds one bulk action: more than a page of the list (50) can
// never be selected, so more is not a form this server made.
const maxBulk = 100

// bulkForm is one bulk request, read strictly.
type bulkForm struct {
	action string // "finish", "delete" or "poll"
	picks  []store.SeriesKey
	back   string // the list page it came from (a canonical list address)
	list   store.SeriesQuery
}

func parseBulk(r *http.Request) (bulkForm, string) {
	f := bulkForm{action: r.PostForm.Get("action"), back: "/admin/series"}
	if f.action != "finish" && f.action != "delete" && f.action != "poll" {
		return f, "Choose Finish, Poll now or Delete."
	}
	if b := r.PostForm.Get("back"); strings.HasPrefix(b, "/admin/series?") || b == "/admin/series" {
		_, raw, _ := strings.Cut(b, "?")
		// The back address is a query of its own, decoded once more: it is
		// held to the rules an address is (checkInput), or dropped.
		if v, err := url.ParseQuery(raw); err == nil && badInput(&url.URL{Path: "/admin/series", RawQuery: raw}) == "" {
			if q, bad := parseListValues(v); bad == "" {
				f.back, f.list = queryHref(q), q
			}
		}
	}
	seen := map[store.SeriesKey]bool{}
	for _, p := range r.PostForm["pick"] {
		site, id, ok := strings.Cut(p, ":")
		k := store.SeriesKey{Site: site, ID: id}
		if !ok || !word.KnownSite(site) || id == "" {
			return f, "That selection is not one this list made."
		}
		if !seen[k] {
			seen[k] = true
			f.picks = append(f.picks, k)
		}
	}
	if len(f.picks) > maxBulk {
		return f, "Select at most " + strconv.Itoa(maxBulk) + " Series at once."
	}
	if len(f.picks) == 0 {
		return f, "Select at least one Series first: tick the box beside each."
	}
	return f, ""
}

// handleBulk acts on the Series selected on the list: Force-poll them, or
// Finish them after one confirm step for the whole batch that names each
// one with its completion hint. Nothing changes before that confirmation.
func handleBulk(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, 64<<10) {
			return
		}
		f, bad := parseBulk(r)
		step := components.BulkStep{Back: f.back, Delete: f.action == "delete"}
		if bad != "" {
			step.Message, step.Fault = bad, true
			bulkAnswer(d, w, r, http.StatusUnprocessableEntity, f, step, false)
			return
		}
		ctx, now := r.Context(), d.now()
		if f.action == "poll" {
			bulkPoll(d, w, r, f, step)
			return
		}
		if r.PostForm.Get("step") != "confirm" || r.PostForm.Get("confirm") != "yes" {
			status := http.StatusOK
			if r.PostForm.Get("step") == "confirm" {
				status = http.StatusUnprocessableEntity
				step.Message, step.Fault = "Tick the box to confirm, or cancel. No Series was finished.", true
				if step.Delete {
					step.Message = "Tick the box to confirm, or cancel. No Series was deleted."
				}
			}
			if err := confirmStep(d, r, f, &step); err != nil {
				failStore(w, r, d.Logger, err, "The selected Series could not be read. Try again.", "admin bulk finish")
				return
			}
			bulkAnswer(d, w, r, status, f, step, false)
			return
		}
		if step.Delete {
			bulkDelete(d, w, r, f, step)
			return
		}
		n, err := d.Store.FinishMany(ctx, f.picks, now)
		if err != nil {
			failStore(w, r, d.Logger, err, "The Series could not be finished. Nothing was changed; try again.", "admin bulk finish")
			return
		}
		d.Logger.Info("series finished in bulk", "count", n)
		step.Message = "Finished " + plural(n, "Series") + ": they are no longer polled."
		bulkAnswer(d, w, r, http.StatusOK, f, step, true)
	})
}

// bulkPoll Force-polls the picks whose Lane will serve them; a pick on a
// Lane that cannot poll is left out and the answer says why (laneView.why),
// and when none is left nothing is requested (422).
func bulkPoll(d Deps, w http.ResponseWriter, r *http.Request, f bulkForm, step components.BulkStep) {
	keep, left, held, err := pollable(d, r, f.picks)
	var n int64
	if err == nil && len(keep) > 0 {
		n, err = d.Store.ForceMany(r.Context(), keep, d.now())
	}
	if err != nil {
		failStore(w, r, d.Logger, err, "The Polls could not be requested. Nothing was changed; try again.", "admin bulk poll")
		return
	}
	why := strings.Join(held, " ")
	if len(keep) == 0 {
		step.Message, step.Fault = why+" Nothing was requested.", true
		bulkAnswer(d, w, r, http.StatusUnprocessableEntity, f, step, false)
		return
	}
	step.Message = "Poll requested for " + plural(n, "Series") + "; each shows its result on its page once its Lane has served it."
	if left > 0 {
		step.Message += " Not for " + plural(left, "Series") + ": " + why
	}
	bulkAnswer(d, w, r, http.StatusOK, f, step, true)
}

// confirmStep names each selected Series and its completion hint.
func confirmStep(d Deps, r *http.Request, f bulkForm, step *components.BulkStep) error {
	rows, err := d.Store.AdminSeriesByKeys(r.Context(), f.picks)
	if err != nil {
		return err
	}
	now := d.now()
	step.Confirm = true
	for _, s := range rows {
		p := components.BulkPick{Key: s.Site + ":" + s.SeriesID, Title: titleOr(s.Title, s.SeriesID) + " (" + s.Site + ")"}
		switch {
		case step.Delete && s.BookmarkCount > 0:
			p.Hint = components.ReadersTrack(s.BookmarkCount) + "."
		case step.Delete:
		case !s.SiteCompletedAt.IsZero() && s.FinishedAt.IsZero():
			p.Hint = s.Site + " marks it completed (seen " + ago(now, s.SiteCompletedAt) + ")."
		}
		step.Picks = append(step.Picks, p)
	}
	return nil
}

// bulkAnswer answers htmx with the bulk region (and, once something was
// done, the list brought up to date out of band); a plain browser gets the
// list page with the region filled, or after a change a 303 back to it.
func bulkAnswer(d Deps, w http.ResponseWriter, r *http.Request, status int, f bulkForm, step components.BulkStep, done bool) {
	if done && !wantsFragment(r) {
		http.Redirect(w, r, f.back, http.StatusSeeOther)
		return
	}
	if wantsFragment(r) && !done {
		render(w, r, d.Logger, status, components.BulkStepView(step))
		return
	}
	list, page, err := listPage(d, r, f.list)
	if err != nil {
		failStore(w, r, d.Logger, err, "The list could not be read. Try again.", "admin bulk: list")
		return
	}
	if wantsFragment(r) {
		render(w, r, d.Logger, status, components.BulkDone(step, list))
		return
	}
	page.Bulk = step
	render(w, r, d.Logger, status, components.AdminSeriesPage(viewerFrom(r.Context()), page))
}

func titleOr(title, id string) string {
	if title == "" {
		return id
	}
	return title
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.FormatInt(n, 10) + " " + what
}

// bulkDelete removes the confirmed Series one by one, each in its own
// transaction with its Bookmarks and its Readers' notes (store.RemoveSeries);
// one already gone is skipped.
func bulkDelete(d Deps, w http.ResponseWriter, r *http.Request, f bulkForm, step components.BulkStep) {
	rows, err := d.Store.AdminSeriesByKeys(r.Context(), f.picks)
	var n int64
	for i := 0; err == nil && i < len(rows); i++ {
		s := rows[i]
		var readers int64
		readers, err = d.Store.RemoveSeries(r.Context(), s.Site, s.SeriesID, adapters.DisplayName(s.Title, s.URL, s.SeriesID), d.now())
		switch {
		case errors.Is(err, store.ErrNotFound):
			err = nil
		case err == nil:
			n++
			d.Logger.Info("series deleted", "site", s.Site, "series_id", s.SeriesID, "readers", readers)
		}
	}
	if err != nil {
		failStore(w, r, d.Logger, err, "Not every Series could be deleted; the list shows which are left. Try again.", "admin bulk delete")
		return
	}
	step.Message = "Deleted " + plural(n, "Series") + "."
	bulkAnswer(d, w, r, http.StatusOK, f, step, true)
}
