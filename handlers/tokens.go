package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

const maxTokenName = 60

func tokensPage(d Deps, r *http.Request, p components.TokensPage) (components.TokensPage, error) {
	l, err := d.Store.ListTokens(r.Context(), viewerFrom(r.Context()).ID)
	if err != nil {
		return p, err
	}
	now := d.now()
	for _, t := range l {
		row := components.TokenRow{ID: strconv.FormatInt(t.ID, 10), Name: t.Label,
			Created: word.Ago(now.Sub(t.CreatedAt)), LastUsed: "never used"}
		if !t.LastUsedAt.IsZero() {
			row.LastUsed = "last used " + word.Ago(now.Sub(t.LastUsedAt))
		}
		p.Tokens = append(p.Tokens, row)
	}
	return p, nil
}

func showTokens(d Deps, w http.ResponseWriter, r *http.Request, status int, p components.TokensPage) {
	p, err := tokensPage(d, r, p)
	if err != nil {
		failStore(w, r, d.Logger, err, "Your tokens could not be read just now. Try again in a moment.", "tokens: list")
		return
	}
	render(w, r, d.Logger, status, components.TokensPageView(viewerFrom(r.Context()), p))
}

func handleTokens(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := components.TokensPage{}
		if r.URL.Query().Get("revoked") == "1" {
			p.Message = "Token revoked: it no longer works."
		}
		showTokens(d, w, r, http.StatusOK, p)
	})
}

// handleCreateToken makes a named token and shows its value this once:
// only its HMAC is kept.
func handleCreateToken(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, maxFormBody) {
			return
		}
		name := strings.TrimSpace(r.PostForm.Get("name"))
		if name == "" || len([]rune(name)) > maxTokenName {
			showTokens(d, w, r, http.StatusBadRequest, components.TokensPage{Message: "Name the token (up to 60 characters), e.g. the browser it is for. No token was made.", Fault: true})
			return
		}
		tok, hash := NewAPIToken(d.TokenKey)
		reader := viewerFrom(r.Context()).ID
		_, err := d.Store.CreateToken(r.Context(), reader, hash, name, d.now())
		if errors.Is(err, store.ErrConflict) {
			showTokens(d, w, r, http.StatusConflict, components.TokensPage{Fault: true,
				Message: "You already hold " + strconv.Itoa(store.MaxTokens) + " tokens, the most one Reader may: revoke one you no longer use, then make this one. No token was made."})
			return
		}
		if err != nil {
			failStore(w, r, d.Logger, err, "The token could not be made just now. Try again.", "tokens: create")
			return
		}
		d.Logger.Info("token created", "discord_id", reader)
		showTokens(d, w, r, http.StatusOK, components.TokensPage{New: tok, NewName: name})
	})
}

func handleRevokeToken(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readForm(d, w, r, maxFormBody) {
			return
		}
		id, err := strconv.ParseInt(urlParam(r, "id"), 10, 64)
		if err == nil {
			err = d.Store.RevokeToken(r.Context(), viewerFrom(r.Context()).ID, id)
		} else {
			err = store.ErrNotFound
		}
		switch {
		case errors.Is(err, store.ErrNotFound):
			fail(w, r, d.Logger, http.StatusNotFound, "You have no such token.")
			return
		case err != nil:
			failStore(w, r, d.Logger, err, "The token could not be revoked just now. It still works; try again.", "tokens: revoke")
			return
		}
		http.Redirect(w, r, "/tokens?revoked=1", http.StatusSeeOther)
	})
}
