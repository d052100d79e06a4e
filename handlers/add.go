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

// maxAddLines bounds one paste: enough for a whole list moved from another
// tracker, small enough that one request stays short.
const maxAddLines = 200

// maxAddBody bounds the form: 200 addresses of up to 2 KiB each.
const maxAddBody = maxAddLines * 2 << 10

// addFromForm reads the add box's field `urls` and adds each line, for
// readerID ("" is the owner's box: the Series alone, no Bookmark). Each
// line is its own transaction, so a line that fails leaves the others and
// itself whole. Both boxes read their form through here.
func addFromForm(d Deps, w http.ResponseWriter, r *http.Request, readerID string) (components.AddBox, int) {
	box := components.AddBox{Sites: word.SiteNames()}
	if no := limitedForm(w, r, maxAddBody, "urls"); no != nil {
		box.Message = no.sentence
		if no.status == http.StatusRequestEntityTooLarge {
			box.Message = "That paste is too large: at most 200 addresses at once. Nothing was added."
		}
		return box, no.status
	}
	lines := addLines(r.PostForm.Get("urls"))
	switch {
	case len(lines) == 0:
		box.Message = "Paste one Series or chapter address per line."
		return box, http.StatusBadRequest
	case len(lines) > maxAddLines:
		box.Text = r.PostForm.Get("urls")
		box.Message = "That is " + strconv.Itoa(len(lines)) + " lines: at most 200 addresses at once. Nothing was added."
		return box, http.StatusBadRequest
	}
	status := http.StatusOK
	arrive := newArrivals(d)
	for _, l := range lines {
		res := addLine(d, r, arrive, readerID, l)
		if res.Word == "failed" {
			status = http.StatusServiceUnavailable // a line could not be saved: try again
		}
		box.Results = append(box.Results, res)
	}
	return box, status
}

// addLines splits a paste into its addresses: one per line (any line
// ending), blank lines and surrounding spaces dropped.
func addLines(raw string) []string {
	var lines []string
	for l := range strings.SplitSeq(strings.ReplaceAll(raw, "\r", "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// addLine adds one address and says what happened to it; arrive says when
// a new Series' title comes.
func addLine(d Deps, r *http.Request, arrive *arrivals, readerID, line string) components.AddResult {
	out := components.AddResult{Line: shownLine(line)}
	line = adapters.Pasted(line)
	c, err := adapters.RecogniseChapter(line)
	if err != nil {
		out.Word, out.Fault = "unsupported", true
		out.Sentence = addressRefusal(err) + " Nothing was added."
		return out
	}
	req := store.AddRequest{Site: c.Site, SeriesID: c.SeriesID, URL: c.URL, Kind: string(word.Site(c.Site).Kind()), ReaderID: readerID}
	if c.Number != "" {
		req.Chapter, req.ChapterURL = c.Number, line
	}
	res, err := d.Store.AddAddress(r.Context(), req, d.now())
	if err != nil {
		d.Logger.Error("add by address failed", "site", c.Site, "series_id", c.SeriesID, "err", err)
		out.Word, out.Fault = "failed", true
		out.Sentence = "Could not be added just now; nothing of it was saved. Try again."
		return out
	}
	out.Word, out.Sentence = addSentence(readerID == "", c, res, func() string {
		if readerID == "" {
			return arrive.forOwner(r, c.Site)
		}
		return arrive.of(r, c.Site)
	})
	if readerID == "" {
		out.Href = seriesHref(c.Site, c.SeriesID)
	}
	return out
}

// addressRefusal is why an address was refused, in the reason
// adapters.Recognise gives (the one `mangabookmark fetch` prints): the add
// box, the import and the API say it alike. Only a host of no Site names
// the Sites there are; an http address or a page of a Site that is no
// Series is refused for that, not as "no supported Site".
func addressRefusal(err error) string {
	s := "Refused: " + err.Error()
	if errors.Is(err, adapters.ErrUnknownSite) {
		s += " (the Sites are " + strings.Join(word.SiteNames(), ", ") + ")"
	}
	return s + "."
}

// addSentence says what an add did, in the Reader's or the owner's terms;
// arrival is what its Lane's state promises a new Series, in the same
// terms (arrivals).
func addSentence(owner bool, c adapters.Chapter, res store.AddResult, arrival func() string) (word, sentence string) {
	what := c.Site + " Series " + c.SeriesID
	if owner {
		if res.SeriesCreated {
			return "added", "Added " + what + ", with no Bookmark (an orphan); " + arrival()
		}
		return "already", what + " is already known. Nothing was changed."
	}
	progress := ""
	if res.ProgressMoved {
		progress = " Progress set to " + c.Number + "."
	} else if c.Number != "" {
		progress = " Your Progress is already at or past chapter " + c.Number + "."
	}
	if res.Finished {
		// A Finished Series is not polled (CONTEXT.md, Finished), so "Added"
		// alone would promise chapters that never come (issue 24, item 5).
		// The Bookmark is kept: the Reader asked for it and keeps Progress.
		finished := adapters.DisplayName(res.Title, c.URL, c.SeriesID) + " is Finished by the owner and no longer polled"
		if res.BookmarkCreated {
			return "added", finished + "; bookmarked anyway." + progress
		}
		return wordAlready(res), "Already bookmarked; " + finished + "." + progress
	}
	switch {
	case res.BookmarkCreated:
		s := "Added " + what + "." + progress
		if res.SeriesCreated {
			s += " " + arrival()
		}
		return "added", s
	case res.ProgressMoved:
		return "progress", "Already bookmarked." + progress
	}
	return "already", "Already bookmarked." + progress
}

// wordAlready is the result word for a Series the Reader had bookmarked.
func wordAlready(res store.AddResult) string {
	if res.ProgressMoved {
		return "progress"
	}
	return "already"
}

func ownerAddBox() components.AddBox {
	return components.AddBox{Action: "/admin/series", Sites: word.SiteNames()}
}

// handleAdminAddSeries is POST /admin/series: the owner's add box. It adds
// Series without a Bookmark, then reads the list again after the writes, so
// its count and rows include what was just added: htmx gets the box and the
// list the owner is looking at (its address, HX-Current-URL) swapped out of
// band; a plain form gets the page showing the orphans, where the new ones
// now are.
func handleAdminAddSeries(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := store.SeriesQuery{Filter: store.FilterOrphan}
		if wantsFragment(r) {
			var ok bool
			if q, ok = shownListQuery(r); !ok {
				fail(w, r, d.Logger, http.StatusBadRequest, "The list this page shows (HX-Current-URL) has an address no page here takes: bytes that are not UTF-8, a NUL, or far too long. Nothing was added.")
				return
			}
		}
		box, status := addFromForm(d, w, r, "")
		box.Action = "/admin/series"
		list, page, err := listPage(d, r, q)
		if err != nil {
			failStore(w, r, d.Logger, err, "The list could not be read just now. Try again in a moment.", "admin series: list after add")
			return
		}
		if wantsFragment(r) {
			render(w, r, d.Logger, status, components.AddBoxWithSeriesList(box, list))
			return
		}
		page.Add = box
		render(w, r, d.Logger, status, components.AdminSeriesPage(viewerFrom(r.Context()), page))
	})
}

// shownListQuery is the list the owner's page shows, read from the address
// htmx reports (HX-Current-URL); the whole list when it is not a list page
// or not one this server made. The header is the client's to write, so its
// query is held to the rules of an address (checkInput), as the bulk form's
// back field is: false when it breaks them, and the caller refuses before
// it acts.
func shownListQuery(r *http.Request) (store.SeriesQuery, bool) {
	u, err := url.Parse(r.Header.Get("HX-Current-URL"))
	if err != nil || u.Path != "/admin/series" {
		return store.SeriesQuery{}, true
	}
	if badInput(u) != "" {
		return store.SeriesQuery{}, false
	}
	q, bad := parseListValues(u.Query())
	if bad != "" {
		return store.SeriesQuery{}, true
	}
	return q, true
}
