package handlers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// apiBookmark is one Bookmark as the API shows it. Chapter numbers are JSON
// numbers written from the canonical decimal (12.5 stays 12.5), null when
// unknown.
type apiBookmark struct {
	Site          string       `json:"site"`
	SeriesID      string       `json:"series_id"`
	URL           string       `json:"url"`
	Title         string       `json:"title"`
	Kind          string       `json:"kind"`
	Cover         string       `json:"cover"`
	LatestChapter *json.Number `json:"latest_chapter"`
	LatestURL     string       `json:"latest_chapter_url"`
	Progress      *json.Number `json:"progress"`
	ProgressURL   string       `json:"progress_url"`
	New           bool         `json:"new"`
}

func number(s *string) *json.Number {
	if s == nil {
		return nil
	}
	n := json.Number(*s)
	return &n
}

func (api *apiServer) bookmarkJSON(b store.Bookmark) apiBookmark {
	return apiBookmark{
		Site: b.Site, SeriesID: b.SeriesID, URL: b.URL, Title: b.Title, Kind: b.Kind,
		Cover:         api.coverURL(b.Site, b.SeriesID, b.CoverTried),
		LatestChapter: number(b.LatestChapter), LatestURL: b.LatestURL,
		Progress: number(b.Progress), ProgressURL: b.ProgressURL, New: b.New,
	}
}

// coverURL is the absolute address of a stored cover on our origin ("" while
// none is stored). It is served to a signed-in browser, not to a token.
func (api *apiServer) coverURL(site, id, coverTried string) string {
	if src := coverSrc(site, id, coverTried); src != "" {
		return api.d.PublicBaseURL + src
	}
	return ""
}

// coverPath is the stable address our own origin serves a Series' cover at.
func coverPath(site, seriesID string) string {
	return "/covers/" + url.PathEscape(site) + "/" + url.PathEscape(seriesID)
}

type apiMe struct {
	Reader struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"reader"`
	Token struct {
		ID    int64  `json:"id"`
		Label string `json:"label"`
	} `json:"token"`
	UserscriptLatest string `json:"userscript_latest,omitempty"`
}

// handleMe is GET /api/v1/me: who the token belongs to (the panel's
// "test connection").
func (api *apiServer) handleMe(w http.ResponseWriter, r *http.Request) {
	tok := tokenFrom(r.Context())
	rd, err := api.d.Store.GetReader(r.Context(), tok.ReaderID)
	if err != nil {
		api.internal(w, r, "me", err)
		return
	}
	var me apiMe
	me.Reader.ID, me.Reader.Name = rd.DiscordID, rd.Name
	me.Token.ID, me.Token.Label = tok.ID, tok.Label
	me.UserscriptLatest = api.d.UserscriptVersion
	api.reply(w, http.StatusOK, me)
}

// handleBookmarks is GET /api/v1/bookmarks: every Bookmark of the token's
// Reader, with an ETag of the exact body so the userscript's cache revalidates
// with If-None-Match for the price of a 304.
func (api *apiServer) handleBookmarks(w http.ResponseWriter, r *http.Request) {
	list, err := api.d.Store.ListBookmarks(r.Context(), tokenFrom(r.Context()).ReaderID)
	if err != nil {
		api.internal(w, r, "list bookmarks", err)
		return
	}
	out := struct {
		Bookmarks []apiBookmark `json:"bookmarks"`
	}{Bookmarks: make([]apiBookmark, 0, len(list))}
	for _, b := range list {
		out.Bookmarks = append(out.Bookmarks, api.bookmarkJSON(b))
	}
	body, err := json.Marshal(out)
	if err != nil {
		api.internal(w, r, "encode bookmarks", err)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "private, no-cache")
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// etagMatches applies If-None-Match's weak comparison to one strong ETag.
func etagMatches(header, etag string) bool {
	for c := range strings.SplitSeq(header, ",") {
		c = strings.TrimPrefix(strings.TrimSpace(c), "W/")
		if c == "*" || c == etag {
			return true
		}
	}
	return false
}

type apiSeries struct {
	Title         string       `json:"title"`
	Kind          string       `json:"kind"`
	Cover         string       `json:"cover"`
	LatestChapter *json.Number `json:"latest_chapter"`
	LatestURL     string       `json:"latest_chapter_url"`
	Finished      bool         `json:"finished"`
}

type apiLookup struct {
	Supported bool         `json:"supported"`
	Reason    string       `json:"reason,omitempty"`
	Site      string       `json:"site,omitempty"`
	SeriesID  string       `json:"series_id,omitempty"`
	SeriesURL string       `json:"series_url,omitempty"`
	Series    *apiSeries   `json:"series"`
	Bookmark  *apiBookmark `json:"bookmark"`
}

// handleLookup is GET /api/v1/lookup?url=: what the userscript shows on a
// Site's page. An address of no Site is an answer here ("supported": false),
// not an error: the panel asks about every page it runs on.
func (api *apiServer) handleLookup(w http.ResponseWriter, r *http.Request) {
	raw := r.URL.Query().Get("url")
	if strings.TrimSpace(raw) == "" {
		api.fail(w, r, apiErr(http.StatusBadRequest, apiBadRequest, "Add ?url= with the page's address."))
		return
	}
	ref, err := adapters.Recognise(raw)
	if err != nil {
		api.reply(w, http.StatusOK, apiLookup{Reason: err.Error()})
		return
	}
	out := apiLookup{Supported: true, Site: ref.Site, SeriesID: ref.SeriesID, SeriesURL: ref.URL}
	ctx := r.Context()
	s, err := api.d.Store.GetSeries(ctx, ref.Site, ref.SeriesID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		api.reply(w, http.StatusOK, out)
		return
	case err != nil:
		api.internal(w, r, "lookup series", err)
		return
	}
	out.Series = &apiSeries{
		Title: s.Title, Kind: s.Kind, Cover: api.coverURL(s.Site, s.SeriesID, s.CoverTried),
		LatestChapter: number(s.LatestChapter), LatestURL: s.LatestChapterURL, Finished: !s.FinishedAt.IsZero(),
	}
	b, err := api.d.Store.GetBookmark(ctx, tokenFrom(ctx).ReaderID, ref.Site, ref.SeriesID)
	switch {
	case err == nil:
		bj := api.bookmarkJSON(b)
		out.Bookmark = &bj
		// The panel shows the Latest Chapter this Reader sees: their own
		// Sighting counts for them while no Poll has read the page
		// (CONTEXT.md, Sighting).
		out.Series.LatestChapter, out.Series.LatestURL = bj.LatestChapter, bj.LatestURL
	case !errors.Is(err, store.ErrNotFound):
		api.internal(w, r, "lookup bookmark", err)
		return
	}
	api.reply(w, http.StatusOK, out)
}

// recogniseForWrite maps a write's address to its Series; an address it
// cannot take is the error unknown_site (a stable word), its message the
// reason the add box gives (addressRefusal). The API takes
// the address a client read from the page (ADR 0008), whole, so it puts no
// scheme in front the way the paste boxes do (adapters.Pasted).
func recogniseForWrite(raw string) (adapters.Ref, *apiError) {
	ref, err := adapters.Recognise(raw)
	if err != nil {
		return ref, apiErr(http.StatusBadRequest, apiUnknownSite, addressRefusal(err))
	}
	return ref, nil
}

// chapterAgrees refuses a chapter number the address contradicts: the
// address is kept as the Progress address, so chapter 7 beside the address of
// chapter 99 would send the Reader to the wrong chapter. A Series address, or
// a chapter address without a number (Kagane's), takes the number as sent.
func chapterAgrees(raw, num string) *apiError {
	named, ok := adapters.ChapterOf(raw)
	if num == "" || !ok || word.Chapter(named).Compare(word.Chapter(num)) == 0 {
		return nil
	}
	return apiErr(http.StatusUnprocessableEntity, apiChapterMismatch, "The address is of chapter "+named+" but \"chapter\" says "+num+"; send the chapter the address names.")
}

type apiProgressAnswer struct {
	Applied  bool        `json:"applied"`
	Bookmark apiBookmark `json:"bookmark"`
}

// progress is POST /api/v1/progress: raise my Progress (never lower it
// unless "backwards": true), creating the Bookmark — and the Series, with a
// Forced Poll for its facts — when "bookmark": true.
func (api *apiServer) progress(r *http.Request, body []byte) (any, *apiError) {
	req, num, e := decodeProgress(body)
	if e != nil {
		return nil, e
	}
	ref, e := recogniseForWrite(req.URL)
	if e != nil {
		return nil, e
	}
	if e := chapterAgrees(req.URL, num); e != nil {
		return nil, e
	}
	ctx, now, reader := r.Context(), api.d.now(), tokenFrom(r.Context()).ReaderID
	if req.Bookmark {
		if _, err := api.d.Store.AddSeries(ctx, store.Series{Site: ref.Site, SeriesID: ref.SeriesID, URL: ref.URL, Kind: string(word.Site(ref.Site).Kind())}, now); err != nil {
			return nil, api.internalErr(r, "add series", err)
		}
		if err := api.d.Store.AddBookmark(ctx, reader, ref.Site, ref.SeriesID, now); err != nil {
			return nil, api.internalErr(r, "add bookmark", err)
		}
	}
	applied := false
	if num != "" {
		chapterURL := ""
		if u := strings.TrimSpace(req.URL); u != ref.URL {
			chapterURL = u // a chapter page: the address of the chapter read
		}
		res, err := api.d.Store.SetProgress(ctx, reader, ref.Site, ref.SeriesID, num, chapterURL, req.Backwards, now)
		if errors.Is(err, store.ErrNotFound) {
			return nil, apiErr(http.StatusNotFound, apiNotBookmarked, "You do not bookmark this Series; send \"bookmark\": true to add it.")
		}
		if err != nil {
			return nil, api.internalErr(r, "set progress", err)
		}
		applied = res == store.ProgressMoved
	}
	b, err := api.d.Store.GetBookmark(ctx, reader, ref.Site, ref.SeriesID)
	if err != nil {
		return nil, api.internalErr(r, "read bookmark", err)
	}
	return apiProgressAnswer{Applied: applied, Bookmark: api.bookmarkJSON(b)}, nil
}

type apiSightingAnswer struct {
	Known  bool `json:"known"`
	Raised bool `json:"raised"`
	// OnlyYours: no Poll has read a number from the Series' page, so the
	// Sighting counts for its Reader only (CONTEXT.md, Sighting).
	OnlyYours     bool         `json:"only_yours"`
	LatestChapter *json.Number `json:"latest_chapter"`
}

// implausible is the answer to a Sighting above the Sighting bound
// (CONTEXT.md, Sighting): it names the bound, so the Reader can tell a
// misread number from a Site far ahead of its own Series page.
func implausible(top, bound string) *apiError {
	return apiErr(http.StatusUnprocessableEntity, apiImplausible, "Chapter "+top+" is too far above what the Site's page "+
		"has shown: a Sighting may raise Latest Chapter to at most "+bound+" ("+strconv.Itoa(word.SightingReach)+
		" above the highest chapter the page showed) until a read of the page shows more.")
}

// sightings is POST /api/v1/sightings: chapter numbers a Reader saw on a
// Site's page. The highest raises Latest Chapter when it is higher, with the
// Reader recorded as who raised it (the owner's "unverified" filter shows
// such numbers until a Poll confirms or replaces them). On a Series no Poll
// has read a number for, it counts for this Reader only until a second
// Reader agrees (store.Sight). A Series nobody added is an answer ("known":
// false), not an error: the userscript reports what it sees on any page. A
// number far above what the page has shown is 422 implausible and changes
// nothing.
func (api *apiServer) sightings(r *http.Request, body []byte) (any, *apiError) {
	req, chapters, e := decodeSighting(body)
	if e != nil {
		return nil, e
	}
	ref, e := recogniseForWrite(req.URL)
	if e != nil {
		return nil, e
	}
	top := chapters[0]
	for _, c := range chapters[1:] {
		if word.Chapter(c).Compare(word.Chapter(top)) > 0 {
			top = c
		}
	}
	ctx := r.Context()
	did, err := api.d.Store.Sight(ctx, ref.Site, ref.SeriesID, top, "", tokenFrom(ctx).ReaderID, api.d.now())
	var imp *store.ImplausibleError
	if errors.As(err, &imp) {
		return nil, implausible(top, imp.Bound)
	}
	if err != nil {
		return nil, api.internalErr(r, "raise latest", err)
	}
	s, err := api.d.Store.GetSeries(ctx, ref.Site, ref.SeriesID)
	if errors.Is(err, store.ErrNotFound) {
		return apiSightingAnswer{}, nil
	}
	if err != nil {
		return nil, api.internalErr(r, "read series", err)
	}
	return apiSightingAnswer{Known: true, Raised: did.Raised, OnlyYours: did.OnlyYours, LatestChapter: number(s.LatestChapter)}, nil
}
