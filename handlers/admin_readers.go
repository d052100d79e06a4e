package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// ReaderLinkTTL is how long a named Reader's sign-in link waits to be used:
// long enough to reach them through another channel.
const ReaderLinkTTL = 24 * time.Hour

// localReaderPrefix marks the Readers the owner named (no Discord account):
// their id is derived from the name, so the same name is the same Reader.
const localReaderPrefix = "local-"

func localReaderID(name string) string {
	h := sha256.Sum256([]byte(strings.ToLower(name)))
	return localReaderPrefix + hex.EncodeToString(h[:8])
}

// NewReaderLink names a Reader and stores a single-use sign-in link for
// them, valid for ReaderLinkTTL; it returns the link's full URL.
func NewReaderLink(ctx context.Context, s *store.Store, baseURL, name string, now time.Time) (string, error) {
	id := localReaderID(name)
	if err := s.NameReader(ctx, id, name, now); err != nil {
		return "", err
	}
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
			Local: strings.HasPrefix(rd.DiscordID, localReaderPrefix)}
		if !rd.LastSeenAt.IsZero() {
			row.LastSeen = "last seen " + word.Age(now.Sub(rd.LastSeenAt)) + " ago"
		}
		p.Readers = append(p.Readers, row)
	}
	render(w, r, d.Logger, status, components.AdminReadersPage(viewerFrom(r.Context()), p))
}

func handleAdminReaders(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := components.ReadersPage{}
		if r.URL.Query().Get("signed-out") == "1" {
			p.Message = "Signed out everywhere: every session of that Reader has ended."
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
		link, err := NewReaderLink(r.Context(), d.Store, d.PublicBaseURL, name, d.now())
		if err != nil {
			failStore(w, r, d.Logger, err, "The link could not be made just now. Try again.", "admin readers: create link")
			return
		}
		d.Logger.Info("reader link created", "discord_id", localReaderID(name))
		showReaders(d, w, r, http.StatusOK, components.ReadersPage{Link: link, LinkFor: name, LinkTTL: "24 hours"})
	})
}

// handleSignOutReader ends every session of one Reader.
func handleSignOutReader(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := urlParam(r, "id")
		_, err := d.Store.GetReader(r.Context(), id)
		if err == nil {
			err = d.Store.EndSessions(r.Context(), id)
		}
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

// nameOr is a Reader's name, or their id when they have none.
func nameOr(name, id string) string {
	if name == "" {
		return id
	}
	return name
}
