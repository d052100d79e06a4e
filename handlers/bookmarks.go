package handlers

import (
	"cmp"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// listUnreadable is the sentence of every page whose list the database
// could not give: 503, since trying again shortly is the fix.
const listUnreadable = "Your Bookmarks could not be read just now. Try again in a moment."

// parseBookmarkQuery reads ?new=1&q=… (a search over 100 characters is cut).
func parseBookmarkQuery(r *http.Request) store.BookmarkQuery {
	v := r.URL.Query()
	q := store.BookmarkQuery{NewOnly: v.Get("new") == "1", Search: v.Get("q")}
	if s := []rune(q.Search); len(s) > 100 {
		q.Search = string(s[:100])
	}
	return q
}

// bookmarkList reads the Reader's list under q as the region shows it;
// under a Limit it says how many more there are.
func bookmarkList(d Deps, r *http.Request, q store.BookmarkQuery) (components.BookmarkList, error) {
	ctx, id, now := r.Context(), viewerFrom(r.Context()).ID, d.now()
	rows, err := d.Store.QueryBookmarks(ctx, id, q)
	if err != nil {
		return components.BookmarkList{}, err
	}
	l := components.BookmarkList{Total: len(rows), Filtered: q.NewOnly || q.Search != ""}
	if l.Filtered || q.Limit > 0 && len(rows) == q.Limit {
		if l.Total, err = d.Store.CountBookmarks(ctx, id); err != nil {
			return components.BookmarkList{}, err
		}
	}
	if !l.Filtered {
		l.More = l.Total - len(rows)
	}
	for _, b := range rows {
		l.Rows = append(l.Rows, bookmarkRow(d, b, id, now))
	}
	return l, nil
}

// bookmarkRow is one Bookmark as viewer's row shows it.
func bookmarkRow(d Deps, b store.Bookmark, viewer string, now time.Time) components.MyBookmark {
	title := adapters.DisplayName(b.Title, b.URL, b.SeriesID)
	r := components.MyBookmark{
		Site: b.Site, ID: b.SeriesID, Title: title,
		Cover:      components.CoverView{URL: coverSrc(b.Site, b.SeriesID, b.CoverTried), Title: title, Size: components.CoverSmall},
		SeriesHref: webURL(b.URL), Ember: b.New,
	}
	if b.LatestChapter != nil {
		r.Latest = *b.LatestChapter
		switch {
		case b.RaisedBy != "":
			r.Unconfirmed = unconfirmed(b, viewer)
		case !b.LatestAt.IsZero():
			r.LatestSeen = "seen " + word.Ago(now.Sub(b.LatestAt))
		}
	}
	if b.Progress != nil {
		r.Progress = *b.Progress
	}
	r.NextHref, r.NextLabel = nextChapter(b)
	r.Health = rowHealth(d, b, now)
	return r
}

// rowHealth is the one mark a row carries about its Series (issue 24, item
// 5), the most telling first: Finished (no Poll reads it any more), then
// failing by the owner's own rule (store.Bookmark.Failing), then the Site's
// completed value (CONTEXT.md, Completion hint). Finished also covers the
// two others: a Series no Poll reads has nothing more to fail or complete.
func rowHealth(d Deps, b store.Bookmark, now time.Time) components.RowHealth {
	switch {
	case !b.FinishedAt.IsZero():
		return components.RowHealth{Word: "finished", Text: "finished — no longer checked"}
	case b.Failing(now):
		return components.RowHealth{Word: "failing", Text: "not updating since", Day: word.Day(b.FailingSince, d.Zone), Since: d.when(b.FailingSince)}
	case !b.SiteCompletedAt.IsZero():
		return components.RowHealth{Word: "site-completed", Text: "completed on its Site"}
	}
	return components.RowHealth{}
}

// unconfirmed says who stands behind a Latest Chapter that a Reader's
// Sighting raised and no read of the Site's page has shown yet (CONTEXT.md,
// Sighting): the number is one Reader's word, and the row says whose. A
// page no Poll has read a number from is not said to lack it.
func unconfirmed(b store.Bookmark, viewer string) string {
	who := cmp.Or(b.RaisedByName, "a Reader")
	if b.RaisedBy == viewer {
		who = "you"
	}
	if !b.PageRead {
		return "seen by " + who + "; no Poll has read the Site's page yet"
	}
	return "seen by " + who + ", not yet on the Site's page"
}

// nextChapter is where the row's main button goes: the Site's page of the
// chapter after my Progress when a chapter past it is known and its address
// can be told (the Latest Chapter's own address, or one the Site's pattern
// builds), else the Series page.
func nextChapter(b store.Bookmark) (href, label string) {
	series := webURL(b.URL)
	if !b.New || b.LatestChapter == nil {
		if series == "" {
			return "", ""
		}
		return series, "Open on " + b.Site
	}
	next := *b.LatestChapter
	if b.Progress != nil {
		if n, ok := adapters.NextChapter(*b.Progress); ok && word.Chapter(n).Compare(word.Chapter(next)) < 0 {
			next = n
		}
	} else if word.Chapter("1").Compare(word.Chapter(next)) < 0 {
		next = "1"
	}
	if next == *b.LatestChapter && webURL(b.LatestURL) != "" {
		return b.LatestURL, "Read chapter " + next
	}
	if u, ok := adapters.ChapterURL(adapters.Ref{Site: b.Site, SeriesID: b.SeriesID, URL: b.URL}, next); ok {
		return u, "Read chapter " + next
	}
	if series == "" {
		return "", ""
	}
	return series, "Open on " + b.Site
}

// handleHome is My Bookmarks: the page, or for htmx the list region alone.
func handleHome(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := parseBookmarkQuery(r)
		l, err := bookmarkList(d, r, q)
		if err != nil {
			failStore(w, r, d.Logger, err, listUnreadable, "my bookmarks: list")
			return
		}
		if wantsFragment(r) {
			w.Header().Set("HX-Push-Url", homeHref(q))
			render(w, r, d.Logger, http.StatusOK, components.BookmarkListRegion(l))
			return
		}
		p := components.BookmarksPage{NewOnly: q.NewOnly, Search: q.Search, List: l, Add: readerAddBox()}
		p.Removed = removedFromQuery(d, r)
		// Taken (read and deleted) only by the full page, so each sentence
		// is said once; a failure loses nothing and is said next time.
		if notes, err := d.Store.TakeRemovedNotes(r.Context(), viewerFrom(r.Context()).ID); err == nil {
			p.OwnerRemoved = notes
		} else {
			d.Logger.Warn("my bookmarks: removed notes", "err", err)
		}
		render(w, r, d.Logger, http.StatusOK, components.BookmarksHome(viewerFrom(r.Context()), p))
	})
}

// homeHref is the canonical address of a filtered list.
func homeHref(q store.BookmarkQuery) string {
	v := url.Values{}
	if q.NewOnly {
		v.Set("new", "1")
	}
	if q.Search != "" {
		v.Set("q", q.Search)
	}
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

func readerAddBox() components.AddBox {
	return components.AddBox{Action: "/", Sites: word.SiteNames()}
}

// handleAddBookmarks is POST /: the Reader's add box. htmx gets the box
// with its results and the list swapped out of band; a plain form the page.
func handleAddBookmarks(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		box, status := addFromForm(d, w, r, viewerFrom(r.Context()).ID)
		box.Action = "/"
		answerAddBox(d, w, r, status, box, store.BookmarkQuery{}, "my bookmarks: list after add")
	})
}

// answerAddBox answers an add (or an import) on `/`: the box with its
// result lines and the Reader's list under q read after the writes; htmx
// gets the box with the list swapped out of band, a plain form the whole
// page.
func answerAddBox(d Deps, w http.ResponseWriter, r *http.Request, status int, box components.AddBox, q store.BookmarkQuery, what string) {
	l, err := bookmarkList(d, r, q)
	if err != nil {
		failStore(w, r, d.Logger, err, listUnreadable, what)
		return
	}
	if wantsFragment(r) {
		render(w, r, d.Logger, status, components.AddBoxWithList(box, l))
		return
	}
	render(w, r, d.Logger, status, components.BookmarksHome(viewerFrom(r.Context()), components.BookmarksPage{List: l, Add: box}))
}

// rowControl runs one row's control, then answers htmx with the row and a
// plain form with a redirect home.
func rowControl(d Deps, act func(r *http.Request, site, id string) controlResult) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, maxFormBody) {
			return
		}
		site, id, reader := urlParam(r, "site"), urlParam(r, "id"), viewerFrom(r.Context()).ID
		res := act(r, site, id)
		status, refusal := res.status, res.refusal
		if status == http.StatusNotFound {
			fail(w, r, d.Logger, http.StatusNotFound, "You have no Bookmark on that Series.")
			return
		}
		if status >= 500 {
			fail(w, r, d.Logger, status, refusal)
			return
		}
		if !wantsFragment(r) {
			if refusal != "" {
				fail(w, r, d.Logger, status, refusal)
				return
			}
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		b, err := d.Store.GetBookmark(r.Context(), reader, site, id)
		if errors.Is(err, store.ErrNotFound) {
			// A change refused on a Bookmark already removed: no row to
			// answer with, so the refusal is the message, as without htmx.
			if refusal == "" {
				status, refusal = http.StatusNotFound, "You have no Bookmark on that Series."
			}
			fail(w, r, d.Logger, status, refusal)
			return
		}
		if err != nil {
			failStore(w, r, d.Logger, err, listUnreadable, "my bookmarks: read row")
			return
		}
		row := bookmarkRow(d, b, reader, d.now())
		row.Message, row.Fault = res.done, refusal != ""
		if refusal != "" {
			row.Message = refusal
		}
		if status == 0 {
			status = http.StatusOK
		}
		render(w, r, d.Logger, status, components.BookmarkItem(row))
	})
}

// progressResult turns a store answer into the row's sentence.
func progressResult(d Deps, what string, res store.ProgressResult, err error, num string) controlResult {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return controlResult{status: http.StatusNotFound}
	case err != nil:
		d.Logger.Error("my bookmarks: control failed", "control", what, "err", err)
		return controlResult{status: storeStatus(err), refusal: "That change could not be saved. Nothing was changed; try again."}
	case res == store.ProgressUnchanged:
		return controlResult{done: "Progress was already " + num + "."}
	}
	return controlResult{done: "Progress set to " + num + "."}
}

// handleSetProgress sets Progress to the typed number, up or down: on the
// web the Reader means the number they type.
func handleSetProgress(d Deps) http.Handler {
	return rowControl(d, func(r *http.Request, site, id string) controlResult {
		c, ok := word.ParseChapter(r.PostForm.Get("num"))
		num := string(c)
		if !ok {
			return controlResult{status: http.StatusBadRequest, refusal: "Type a chapter number such as 12 or 12.5. Progress was not changed."}
		}
		res, err := d.Store.SetProgress(r.Context(), viewerFrom(r.Context()).ID, site, id, num, "", true, d.now())
		return progressResult(d, "set progress", res, err, num)
	})
}

// handleCaughtUp sets Progress to the Latest Chapter.
func handleCaughtUp(d Deps) http.Handler {
	return rowControl(d, func(r *http.Request, site, id string) controlResult {
		reader := viewerFrom(r.Context()).ID
		b, err := d.Store.GetBookmark(r.Context(), reader, site, id)
		if err != nil {
			return progressResult(d, "caught up", 0, err, "")
		}
		if b.LatestChapter == nil {
			return controlResult{status: http.StatusConflict, refusal: "No chapter of this Series is known yet, so there is nothing to catch up to."}
		}
		res, err := d.Store.SetProgress(r.Context(), reader, site, id, *b.LatestChapter, b.LatestURL, false, d.now())
		return progressResult(d, "caught up", res, err, *b.LatestChapter)
	})
}

// handleRemoveBookmark removes a Bookmark. htmx gets the Undo in the row's
// place (it stays until the page is left); a plain form is sent home with
// the Undo at the top, its Progress carried in the address.
func handleRemoveBookmark(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, maxFormBody) {
			return
		}
		site, id, reader := urlParam(r, "site"), urlParam(r, "id"), viewerFrom(r.Context()).ID
		b, err := d.Store.GetBookmark(r.Context(), reader, site, id)
		if err == nil {
			err = d.Store.RemoveBookmark(r.Context(), reader, site, id)
		}
		switch {
		case errors.Is(err, store.ErrNotFound):
			fail(w, r, d.Logger, http.StatusNotFound, "You have no Bookmark on that Series.")
			return
		case err != nil:
			failStore(w, r, d.Logger, err, "The Bookmark could not be removed just now. Nothing was changed; try again.", "my bookmarks: remove")
			return
		}
		gone := components.RemovedRow{Site: site, ID: id, Title: adapters.DisplayName(b.Title, b.URL, b.SeriesID), ProgressURL: b.ProgressURL}
		if b.Progress != nil {
			gone.Progress = *b.Progress
		}
		if wantsFragment(r) {
			render(w, r, d.Logger, http.StatusOK, components.RemovedItem(gone))
			return
		}
		v := url.Values{"removed": {site + ":" + id}, "progress": {gone.Progress}, "progress_url": {gone.ProgressURL}}
		http.Redirect(w, r, "/?"+v.Encode(), http.StatusSeeOther)
	})
}

// removedFromQuery is the plain-form Undo the remove redirect carries. The
// title is read from the Series, not the address, so a crafted link cannot
// put words on the page; an Undo whose Series is gone is not offered.
func removedFromQuery(d Deps, r *http.Request) *components.RemovedRow {
	v := r.URL.Query()
	site, id, ok := strings.Cut(v.Get("removed"), ":")
	if !ok || !word.KnownSite(site) || id == "" {
		return nil
	}
	s, err := d.Store.GetSeries(r.Context(), site, id)
	if err != nil {
		return nil
	}
	progress, _ := word.ParseChapter(v.Get("progress"))
	return &components.RemovedRow{Site: site, ID: id, Title: adapters.DisplayName(s.Title, s.URL, s.SeriesID), Progress: string(progress), ProgressURL: webURL(v.Get("progress_url"))}
}

// handleRestoreBookmark is the Undo: the Bookmark comes back with the
// Progress it had.
func handleRestoreBookmark(d Deps) http.Handler {
	return rowControl(d, func(r *http.Request, site, id string) controlResult {
		progress := r.PostForm.Get("progress")
		if progress != "" {
			n, ok := word.ParseChapter(progress)
			if !ok {
				return controlResult{status: http.StatusBadRequest, refusal: "That Undo could not be read. Add the Series again by its address."}
			}
			progress = string(n)
		}
		err := d.Store.RestoreBookmark(r.Context(), viewerFrom(r.Context()).ID, site, id, progress, webURL(r.PostForm.Get("progress_url")), d.now())
		switch {
		case errors.Is(err, store.ErrConflict):
			return controlResult{status: http.StatusConflict, refusal: "That Series is gone from this server, so the Bookmark cannot come back. Add it again by its address."}
		case err != nil:
			d.Logger.Error("my bookmarks: restore", "err", err)
			return controlResult{status: storeStatus(err), refusal: "The Bookmark could not be put back just now. Try again."}
		}
		return controlResult{done: "Bookmark restored."}
	})
}

// storeStatus is the status of a failed store call: 503 when the database
// could not be reached (trying again is the fix), else 500.
func storeStatus(err error) int {
	if store.Unavailable(err) {
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
