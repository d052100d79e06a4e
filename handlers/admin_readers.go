package handlers

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// ReaderLinkTTL is how long a named Reader's sign-in link waits to be used:
// long enough to reach them through another channel.
const ReaderLinkTTL = 24 * time.Hour

// localReaderPrefix marks the Readers the owner named (no Discord account).
// Their id is random, so it is never given twice and no cookie or log line
// of a removed Reader ever names someone else (ADR 0030); their name is
// told apart without regard to case by localNameKey, so a name already
// taken is refused (NewReaderLink), never merged.
const localReaderPrefix = "local-"

func newLocalReaderID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return localReaderPrefix + hex.EncodeToString(b)
}

// localNameKey is the digest of the lower-cased name (the same shape a
// local Reader's id had before ids were random, so existing names keep
// their key).
func localNameKey(name string) string {
	h := sha256.Sum256([]byte(strings.ToLower(name)))
	return localReaderPrefix + hex.EncodeToString(h[:8])
}

// NewReaderLink names a new Reader and stores a single-use sign-in link for
// them, valid for ReaderLinkTTL; it returns the link's full URL.
// store.ErrConflict: a Reader of that name (in any case) exists already.
func NewReaderLink(ctx context.Context, s *store.Store, baseURL, name string, now time.Time) (string, error) {
	_, link, err := nameReader(ctx, s, baseURL, name, now)
	return link, err
}

// nameReader is NewReaderLink that also answers the new Reader's id.
func nameReader(ctx context.Context, s *store.Store, baseURL, name string, now time.Time) (id, link string, err error) {
	id = newLocalReaderID()
	if err := s.NameReader(ctx, id, localNameKey(name), name, now); err != nil {
		return "", "", err
	}
	link, err = readerLink(ctx, s, baseURL, id, now)
	return id, link, err
}

// readerLink stores a single-use sign-in link for a named Reader.
func readerLink(ctx context.Context, s *store.Store, baseURL, id string, now time.Time) (string, error) {
	tok := randomToken()
	if err := s.CreateLoginLink(ctx, hashToken(tok), id, now.Add(ReaderLinkTTL), now); err != nil {
		return "", err
	}
	return baseURL + "/login/" + tok, nil
}

func showReaders(d Deps, w http.ResponseWriter, r *http.Request, status int, p components.ReadersPage) {
	l, err := d.Store.ListReaders(r.Context())
	if err != nil {
		failStore(w, r, d.Logger, err, "The Readers could not be read just now. Try again in a moment.", "admin readers: list")
		return
	}
	now := d.now()
	for _, rd := range l {
		row := components.ReaderRow{ID: url.PathEscape(rd.DiscordID), Name: nameOr(rd.Name, rd.DiscordID), LastSeen: "never signed in",
			Local: strings.HasPrefix(rd.DiscordID, localReaderPrefix), Owner: rd.DiscordID == d.OwnerID}
		if !rd.LastSeenAt.IsZero() {
			row.LastSeen = "last seen " + word.Ago(now.Sub(rd.LastSeenAt))
		}
		p.Readers = append(p.Readers, row)
	}
	render(w, r, d.Logger, status, components.AdminReadersPage(viewerFrom(r.Context()), p))
}

func handleAdminReaders(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := components.ReadersPage{}
		switch {
		case r.URL.Query().Get("signed-out") == "1":
			p.Message = "Signed out everywhere: every session of that Reader has ended and their API tokens are revoked."
		case r.URL.Query().Get("removed") == "1":
			p.Message = "Reader removed: their sessions, API tokens, sign-in links and Bookmarks are gone."
		}
		showReaders(d, w, r, http.StatusOK, p)
	})
}

// handleCreateReaderLink makes a one-time sign-in link for a named Reader.
func handleCreateReaderLink(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, maxFormBody) {
			return
		}
		name := strings.TrimSpace(r.PostForm.Get("name"))
		if name == "" || len([]rune(name)) > 60 {
			showReaders(d, w, r, http.StatusBadRequest, components.ReadersPage{Message: "Type the Reader's name (up to 60 characters). No link was made.", Fault: true})
			return
		}
		id, link, err := nameReader(r.Context(), d.Store, d.PublicBaseURL, name, d.now())
		if errors.Is(err, store.ErrConflict) {
			showReaders(d, w, r, http.StatusConflict, components.ReadersPage{Fault: true,
				Message: "A Reader named " + name + " exists already (names are told apart without regard to case). For them, use New sign-in link on their row; for someone else, type another name. No link was made."})
			return
		}
		if err != nil {
			failStore(w, r, d.Logger, err, "The link could not be made just now. Try again.", "admin readers: create link")
			return
		}
		d.Logger.Info("reader link created", "discord_id", id)
		showReaders(d, w, r, http.StatusOK, components.ReadersPage{Link: link, LinkFor: name, LinkTTL: "24 hours"})
	})
}

// handleNewReaderLink makes a new one-time sign-in link for a Reader the
// owner named before (a link lost, or used up on another device).
func handleNewReaderLink(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, maxFormBody) {
			return
		}
		id := urlParam(r, "id")
		rd, err := d.Store.GetReader(r.Context(), id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && !strings.HasPrefix(id, localReaderPrefix)) {
			fail(w, r, d.Logger, http.StatusNotFound, "There is no such Reader signing in by link.")
			return
		}
		var link string
		if err == nil {
			link, err = readerLink(r.Context(), d.Store, d.PublicBaseURL, id, d.now())
		}
		if err != nil {
			failStore(w, r, d.Logger, err, "The link could not be made just now. Try again.", "admin readers: new link")
			return
		}
		d.Logger.Info("reader link created", "discord_id", id)
		showReaders(d, w, r, http.StatusOK, components.ReadersPage{Link: link, LinkFor: nameOr(rd.Name, id), LinkTTL: "24 hours"})
	})
}

// handleSignOutReader ends every session of one Reader and revokes their
// API tokens: a signed-out userscript would otherwise go on writing.
func handleSignOutReader(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, maxFormBody) {
			return
		}
		id := urlParam(r, "id")
		err := d.Store.SignOutEverywhere(r.Context(), id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			fail(w, r, d.Logger, http.StatusNotFound, "There is no such Reader.")
			return
		case err != nil:
			failStore(w, r, d.Logger, err, "The Reader could not be signed out just now. Try again.", "admin readers: sign out")
			return
		}
		d.Logger.Info("reader signed out everywhere", "discord_id", id)
		http.Redirect(w, r, "/admin/readers?signed-out=1", http.StatusSeeOther)
	})
}

// handleRemoveReader removes a Reader in two steps, as Finish does: the
// first POST shows the confirm step, saying how many Bookmarks go; the
// removal happens on step=confirm with confirm=yes.
func handleRemoveReader(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, maxFormBody) {
			return
		}
		id := urlParam(r, "id")
		if id == d.OwnerID {
			showReaders(d, w, r, http.StatusConflict, components.ReadersPage{Fault: true, Message: "The owner cannot be removed: the server is theirs. Nothing was removed."})
			return
		}
		rd, err := d.Store.GetReader(r.Context(), id)
		var n int
		if err == nil {
			n, err = d.Store.CountBookmarks(r.Context(), id)
		}
		switch {
		case errors.Is(err, store.ErrNotFound):
			fail(w, r, d.Logger, http.StatusNotFound, "There is no such Reader.")
			return
		case err != nil:
			failStore(w, r, d.Logger, err, "The Reader could not be read just now. Nothing was removed; try again.", "admin readers: remove")
			return
		}
		confirm := &components.RemoveConfirm{ID: url.PathEscape(id), Name: nameOr(rd.Name, id), Bookmarks: bookmarksGo(n)}
		if r.PostForm.Get("step") != "confirm" {
			showReaders(d, w, r, http.StatusOK, components.ReadersPage{Remove: confirm})
			return
		}
		if r.PostForm.Get("confirm") != "yes" {
			showReaders(d, w, r, http.StatusUnprocessableEntity, components.ReadersPage{Remove: confirm, Fault: true,
				Message: "Tick the box to confirm, or cancel. The Reader was not removed."})
			return
		}
		if err := d.Store.RemoveReader(r.Context(), id); err != nil && !errors.Is(err, store.ErrNotFound) {
			failStore(w, r, d.Logger, err, "The Reader could not be removed just now. Nothing was removed; try again.", "admin readers: remove")
			return
		}
		d.Logger.Info("reader removed", "discord_id", id, "bookmarks", n)
		http.Redirect(w, r, "/admin/readers?removed=1", http.StatusSeeOther)
	})
}

// bookmarksGo is the confirm step's sentence about the Reader's Bookmarks.
func bookmarksGo(n int) string {
	switch n {
	case 0:
		return "They have no Bookmarks."
	case 1:
		return "Their 1 Bookmark is deleted with them, Progress included."
	}
	return "Their " + strconv.Itoa(n) + " Bookmarks are deleted with them, Progress included."
}

// nameOr is a Reader's name, or their id when they have none.
func nameOr(name, id string) string {
	if name == "" {
		return id
	}
	return name
}
