package handlers

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
)

// settingsView is the page for the Reader's saved settings s.
func settingsView(d Deps, r *http.Request, s store.ReaderSettings) components.SettingsPage {
	return components.SettingsPage{
		Discord: s.Discord, Feed: s.Feed, Push: s.Push, Digest: s.Digest,
		DigestHour: s.DigestHour, Zone: s.Zone, ZoneUnset: !s.Saved,
		DiscordOff:  !d.ReadersWebhook,
		LocalReader: strings.HasPrefix(viewerFrom(r.Context()).ID, localReaderPrefix),
		HasFeed:     s.HasFeedSecret,
		PushKey:     d.PushPublicKey,
	}
}

// showSettings reads the Reader's settings and draws the page with the
// sentence (and a feed address just made, shown once).
func showSettings(d Deps, w http.ResponseWriter, r *http.Request, status int, msg string, fault bool, feedURL string) {
	s, err := d.Store.ReaderSettings(r.Context(), viewerFrom(r.Context()).ID)
	if err != nil {
		failStore(w, r, d.Logger, err, "Your settings could not be read just now. Try again in a moment.", "settings: read")
		return
	}
	p := settingsView(d, r, s)
	p.Message, p.Fault, p.FeedURL = msg, fault, feedURL
	render(w, r, d.Logger, status, components.SettingsPageView(viewerFrom(r.Context()), p))
}

func handleSettings(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msg := ""
		if r.URL.Query().Get("feed") == "off" {
			msg = "Feed turned off: its address no longer works."
		}
		showSettings(d, w, r, http.StatusOK, msg, false, "")
	})
}

// handleSaveSettings saves the form; a bad field is refused with a sentence
// naming it and nothing is saved. Turning the feed on without an address
// makes one, shown this once.
func handleSaveSettings(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, maxFormBody) {
			return
		}
		reader := viewerFrom(r.Context()).ID
		old, err := d.Store.ReaderSettings(r.Context(), reader)
		if err != nil {
			failStore(w, r, d.Logger, err, "Your settings could not be read just now. Nothing was saved; try again.", "settings: read")
			return
		}
		s, refusal := parseSettings(d, r, old)
		if refusal != "" {
			showSettings(d, w, r, http.StatusBadRequest, refusal+" Nothing was saved.", true, "")
			return
		}
		if err := d.Store.SaveReaderSettings(r.Context(), reader, s, d.now()); err != nil {
			failStore(w, r, d.Logger, err, "Your settings could not be saved just now. Try again.", "settings: save")
			return
		}
		feedURL := ""
		if s.Feed && !old.HasFeedSecret {
			if feedURL, err = newFeedAddress(d, r, reader); err != nil {
				failStore(w, r, d.Logger, err, "Your settings were saved, but the feed address could not be made. Save again to make it.", "settings: feed secret")
				return
			}
		}
		showSettings(d, w, r, http.StatusOK, "Saved.", false, feedURL)
	})
}

// parseSettings reads the form over the Reader's saved settings: a missing
// checkbox is off; a missing hour or zone keeps the saved one. It answers
// a sentence naming the first bad field, or "".
func parseSettings(d Deps, r *http.Request, old store.ReaderSettings) (store.ReaderSettings, string) {
	s := old
	f := r.PostForm
	for _, c := range []struct {
		name string
		to   *bool
	}{{"discord", &s.Discord}, {"feed", &s.Feed}, {"push", &s.Push}, {"digest", &s.Digest}} {
		v, ok := f[c.name]
		if ok && (len(v) != 1 || v[0] != "1") {
			return s, "The field " + c.name + " is a checkbox: 1 when on, absent when off."
		}
		*c.to = ok
	}
	if s.Discord && !d.ReadersWebhook {
		return s, "The field discord cannot be on: the owner has not set up the Readers' Discord channel."
	}
	if s.Discord && strings.HasPrefix(viewerFrom(r.Context()).ID, localReaderPrefix) {
		return s, "The field discord cannot be on: it needs Discord sign-in, and you signed in with a link."
	}
	if v, ok := f["digest_hour"]; ok {
		h, err := strconv.Atoi(strings.TrimSpace(v[0]))
		if len(v) != 1 || err != nil || h < 0 || h > 23 {
			return s, "The field digest_hour must be a whole hour from 0 to 23."
		}
		s.DigestHour = h
	}
	if v, ok := f["zone"]; ok {
		z := strings.TrimSpace(v[0])
		if len(v) != 1 || !validZone(z) {
			return s, "The field zone must be a time zone name such as Europe/Paris or UTC."
		}
		s.Zone = z
	}
	return s, ""
}

// validZone: an IANA name the server's zone database knows. "Local" (the
// server's own zone) and "" (UTC to LoadLocation) are not names a Reader
// means.
func validZone(z string) bool {
	if z == "" || z == "Local" || len(z) > 64 {
		return false
	}
	_, err := time.LoadLocation(z)
	return err == nil
}

// NewFeedSecret makes a feed secret and its HMAC (the API tokens' hash
// under TOKEN_KEY), the only form store.SetFeedSecret keeps. The demo makes
// its Reader's feed address with it, as /settings does.
func NewFeedSecret(tokenKey []byte) (secret string, hash []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	secret = base64.RawURLEncoding.EncodeToString(b)
	return secret, apiTokenHash(tokenKey, secret)
}

// FeedURL is the feed address that carries secret (CONTEXT.md, Feed address).
func FeedURL(publicBaseURL, secret string) string {
	return publicBaseURL + "/feeds/" + secret + ".atom"
}

// newFeedAddress makes the Reader a feed secret, stores its hash and
// answers the address, shown once.
func newFeedAddress(d Deps, r *http.Request, reader string) (string, error) {
	secret, hash := NewFeedSecret(d.TokenKey)
	if err := d.Store.SetFeedSecret(r.Context(), reader, hash, d.now()); err != nil {
		return "", err
	}
	d.Logger.Info("feed address made", "discord_id", reader)
	return FeedURL(d.PublicBaseURL, secret), nil
}

// handleNewFeedAddress replaces the feed address: the old stops working.
func handleNewFeedAddress(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, maxFormBody) {
			return
		}
		feedURL, err := newFeedAddress(d, r, viewerFrom(r.Context()).ID)
		if err != nil {
			failStore(w, r, d.Logger, err, "A new feed address could not be made just now. The old one still works; try again.", "settings: feed secret")
			return
		}
		showSettings(d, w, r, http.StatusOK, "New feed address made: the old one no longer works.", false, feedURL)
	})
}

// handleFeedOff revokes the feed address and turns the feed off.
func handleFeedOff(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, maxFormBody) {
			return
		}
		if err := d.Store.SetFeedSecret(r.Context(), viewerFrom(r.Context()).ID, nil, d.now()); err != nil {
			failStore(w, r, d.Logger, err, "The feed could not be turned off just now. Its address still works; try again.", "settings: feed off")
			return
		}
		http.Redirect(w, r, "/settings?feed=off", http.StatusSeeOther)
	})
}
