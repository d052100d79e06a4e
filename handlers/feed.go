package handlers

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gorilla/feeds"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/store"
)

// handleFeed is a Reader's private Atom feed (CONTEXT.md, Feed address):
// no session, the secret in the address is the credential. A wrong or
// revoked secret, or a feed turned off, is the ordinary 404.
func handleFeed(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret := urlParam(r, "secret")
		var addr store.FeedAddress
		var err error
		if len(secret) == 43 { // 32 bytes, base64url: anything else was never made
			// The lookup is an equality on the HMAC, so the time it takes
			// says nothing about how near a guess came to a secret.
			addr, err = d.Store.FeedBySecret(r.Context(), apiTokenHash(d.TokenKey, secret))
		} else {
			err = store.ErrNotFound
		}
		switch {
		case errors.Is(err, store.ErrNotFound):
			handleNotFound(d).ServeHTTP(w, r)
			return
		case err != nil:
			failStore(w, r, d.Logger, err, "The feed could not be read just now. Try again in a moment.", "feed: reader")
			return
		}
		entries, err := d.Store.FeedEntries(r.Context(), addr.Reader)
		if err != nil {
			failStore(w, r, d.Logger, err, "The feed could not be read just now. Try again in a moment.", "feed: entries")
			return
		}
		serveFeed(d, w, r, addr, entries)
	})
}

// serveFeed answers the validators, then 304 when the client's copy is
// current (If-None-Match first, as RFC 9110 says), else the feed. The feed
// is as new as its newest entry; an empty one is as new as its address
// (CONTEXT.md, Feed address), never 1970.
func serveFeed(d Deps, w http.ResponseWriter, r *http.Request, addr store.FeedAddress, entries []store.FeedEntry) {
	h := w.Header()
	etag := feedETag(entries)
	h.Set("ETag", etag)
	// A reader polls the feed; it may keep it, but must ask again each time.
	h.Set("Cache-Control", "private, no-cache")
	newest := addr.MadeAt
	if len(entries) > 0 {
		newest = entries[0].ConfirmedAt
	}
	newest = newest.UTC().Truncate(time.Second)
	if !newest.IsZero() {
		h.Set("Last-Modified", newest.Format(http.TimeFormat))
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if etagMatches(inm, etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	} else if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && !newest.IsZero() && !newest.After(ims) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	feed := atomFeed(d, addr.Reader, entries, newest)
	h.Set("Content-Type", "application/atom+xml; charset=utf-8")
	if err := feeds.WriteXML(feed, w); err != nil {
		d.Logger.Error("feed: write", "err", err)
	}
}

// feedETag names the entries the feed holds: any Arrival added, or dropped
// by a raised Progress, changes it.
func feedETag(entries []store.FeedEntry) string {
	sum := sha256.New()
	for _, e := range entries {
		fmt.Fprintf(sum, "%d,", e.ID)
	}
	return `"` + hex.EncodeToString(sum.Sum(nil)[:12]) + `"`
}

// atomFeed writes the entries through gorilla/feeds' Atom types, which
// escape every text; titles are plain text (no HTML content type).
func atomFeed(d Deps, reader string, entries []store.FeedEntry, newest time.Time) *feeds.AtomFeed {
	host := "mangabookmark"
	if u, err := url.Parse(d.PublicBaseURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	f := &feeds.AtomFeed{
		Xmlns:   "http://www.w3.org/2005/Atom",
		Title:   "mangabookmark: new chapters",
		Id:      "tag:" + host + ",2026:feed/" + url.PathEscape(reader),
		Updated: newest.Format(time.RFC3339),
		Link:    &feeds.AtomLink{Href: d.PublicBaseURL + "/", Rel: "alternate"},
		Author:  &feeds.AtomAuthor{AtomPerson: feeds.AtomPerson{Name: "mangabookmark"}},
	}
	for _, e := range entries {
		bookmark := d.PublicBaseURL + "/#bm-" + url.PathEscape(e.Site) + "-" + url.PathEscape(e.SeriesID)
		chapter := cmp.Or(chapterLink(e), bookmark)
		f.Entries = append(f.Entries, &feeds.AtomEntry{
			Title:   adapters.DisplayName(e.Title, e.URL, e.SeriesID) + " — chapter " + e.Chapter,
			Updated: e.ConfirmedAt.UTC().Format(time.RFC3339),
			Id:      "tag:" + host + ",2026:arrival/" + strconv.FormatInt(e.ID, 10),
			Links: []feeds.AtomLink{
				{Href: chapter, Rel: "alternate", Type: "text/html"},
				{Href: bookmark, Rel: "related", Type: "text/html"},
			},
		})
	}
	return f
}

// chapterLink opens the entry's chapter on the Site: the Arrival's own
// address, else the Latest Chapter's when it is this chapter, else the
// Series page. Only an http(s) address is ever linked.
func chapterLink(e store.FeedEntry) string {
	for _, u := range []string{e.ChapterURL, latestIfSame(e)} {
		if w := webURL(u); w != "" {
			return w
		}
	}
	return webURL(e.URL)
}

func latestIfSame(e store.FeedEntry) string {
	if e.LatestChapter == e.Chapter {
		return e.LatestChapterURL
	}
	return ""
}
