package handlers

import (
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/mangabookmark/mangabookmark/static"
	"github.com/mangabookmark/mangabookmark/store"
)

// Web Push (CONTEXT.md, Push subscription): the service worker, and a
// browser's subscription posted by static/js/push.js. Both posts are
// JSON from our own pages: the router's cross-origin check (csrf) refuses
// them from anywhere else, as it does every form.

const (
	maxPushBody     = 4 << 10 // a PushSubscription's JSON is about 400 bytes
	maxPushEndpoint = 1024
)

// handleServiceWorker serves /sw.js from the root, so its scope is the whole
// site. It depends on no session; no-cache lets a new build replace it.
func handleServiceWorker() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(static.ServiceWorker)
	})
}

// handlePushKey answers the VAPID public key a browser subscribes under.
func handlePushKey(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.PushPublicKey == "" {
			pushReply(w, http.StatusNotFound, "Web Push is not set up on this server.")
			return
		}
		b, _ := json.Marshal(map[string]string{"key": d.PushPublicKey})
		writeJSON(w, http.StatusOK, b)
	})
}

// pushSubscriptionJSON is PushSubscription.toJSON() in a browser.
type pushSubscriptionJSON struct {
	Endpoint string `json:"endpoint"`
	Keys     struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
}

// handleSubscribePush stores this browser's subscription for the signed-in
// Reader.
func handleSubscribePush(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in pushSubscriptionJSON
		if !readPushJSON(w, r, &in) {
			return
		}
		if why := checkPushSubscription(in, d.PushLoopback); why != "" {
			pushReply(w, http.StatusBadRequest, why)
			return
		}
		reader := viewerFrom(r.Context()).ID
		err := d.Store.SavePushSubscription(r.Context(), store.PushSubscription{ReaderID: reader,
			Endpoint: in.Endpoint, P256dh: in.Keys.P256dh, Auth: in.Keys.Auth}, d.now())
		switch {
		case errors.Is(err, store.ErrEndpointTaken):
			d.Logger.Info("push subscribe refused: endpoint held by another reader", "discord_id", reader)
			pushReply(w, http.StatusConflict, "This browser gets the notifications of another Reader, who subscribed it first. They can stop them on their settings page in this browser; then subscribe again.")
			return
		case errors.Is(err, store.ErrConflict):
			pushReply(w, http.StatusConflict, "You have subscribed 20 browsers already: stop notifications in one of them first.")
			return
		case err != nil:
			pushStoreFailed(d, w, r, err, "push: subscribe")
			return
		}
		// Subscribing is asking for Web Push: the switch on /settings
		// follows, so the sentence below is true.
		if err := d.Store.TurnPushOn(r.Context(), reader, d.now()); err != nil {
			pushStoreFailed(d, w, r, err, "push: turn on")
			return
		}
		d.Logger.Info("push subscribed", "discord_id", reader)
		pushReply(w, http.StatusCreated, "This browser gets a notification when a chapter of your Bookmarks is out.")
	})
}

// handleUnsubscribePush forgets this browser's subscription ({"endpoint"}),
// if it is the signed-in Reader's.
func handleUnsubscribePush(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Endpoint string `json:"endpoint"`
		}
		if !readPushJSON(w, r, &in) {
			return
		}
		// No subscription's endpoint holds text PostgreSQL refuses (a NUL):
		// such an address is simply not one this browser subscribed.
		err := store.ErrNotFound
		if cleanText(in.Endpoint) {
			err = d.Store.UnsubscribePush(r.Context(), viewerFrom(r.Context()).ID, in.Endpoint)
		}
		switch {
		case errors.Is(err, store.ErrNotFound):
			pushReply(w, http.StatusNotFound, "This browser was not subscribed.")
		case err != nil:
			pushStoreFailed(d, w, r, err, "push: unsubscribe")
		default:
			pushReply(w, http.StatusOK, "This browser gets no notifications now.")
		}
	})
}

// readPushJSON decodes a small JSON body into v, or answers why not.
func readPushJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		pushReply(w, http.StatusUnsupportedMediaType, "Send the subscription as JSON (Content-Type: application/json).")
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPushBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		pushReply(w, http.StatusRequestEntityTooLarge, "That is far larger than a push subscription.")
		return false
	case err != nil:
		pushReply(w, http.StatusBadRequest, "The request body could not be read.")
		return false
	case !utf8.Valid(body):
		// The decoder would store each bad byte as U+FFFD: an endpoint
		// that is not the one the push service gave.
		pushReply(w, http.StatusBadRequest, "That is not a push subscription: the body is not UTF-8 text.")
		return false
	case json.Unmarshal(body, v) != nil:
		pushReply(w, http.StatusBadRequest, "That is not a push subscription: the body is not the JSON a browser sends.")
		return false
	}
	return true
}

// checkPushSubscription is why in is not a subscription a browser made, or
// "". The endpoint must be https (a push service); the sender also dials
// only public addresses. loopback lets tests name their stand-in service.
func checkPushSubscription(in pushSubscriptionJSON, loopback bool) string {
	// A lone surrogate escape decodes to U+FFFD too; no push service's
	// address holds one.
	u, err := url.Parse(in.Endpoint)
	if err != nil || len(in.Endpoint) > maxPushEndpoint || u.Host == "" || u.User != nil ||
		!cleanText(in.Endpoint) || strings.ContainsRune(in.Endpoint, utf8.RuneError) {
		return "The subscription's endpoint is not a push service's address."
	}
	if u.Scheme != "https" && !(loopback && u.Scheme == "http" && loopbackHost(u.Hostname())) {
		return "The subscription's endpoint is not an https address."
	}
	p256dh, err1 := b64url(in.Keys.P256dh)
	auth, err2 := b64url(in.Keys.Auth)
	if err1 != nil || err2 != nil || len(auth) != 16 {
		return "The subscription's keys are not the ones a browser makes."
	}
	if _, err := ecdh.P256().NewPublicKey(p256dh); err != nil {
		return "The subscription's keys are not the ones a browser makes."
	}
	return ""
}

func loopbackHost(h string) bool {
	ip := net.ParseIP(h)
	return h == "localhost" || (ip != nil && ip.IsLoopback())
}

// b64url decodes base64url with or without padding, as browsers send it.
func b64url(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

type pushAnswer struct {
	Message string `json:"message"`
}

// pushReply answers push.js with one sentence it can show.
func pushReply(w http.ResponseWriter, status int, sentence string) {
	b, _ := json.Marshal(pushAnswer{Message: sentence})
	writeJSON(w, status, b)
}

func pushStoreFailed(d Deps, w http.ResponseWriter, r *http.Request, err error, msg string) {
	if store.Unavailable(err) {
		d.Logger.Warn("database unavailable", "method", r.Method, "route", routePattern(r), "err", err)
		w.Header().Set("Retry-After", unavailableRetryAfter)
		pushReply(w, http.StatusServiceUnavailable, Unavailable)
		return
	}
	d.Logger.Error(msg, "err", err)
	pushReply(w, http.StatusInternalServerError, "The subscription could not be saved just now. Try again.")
}
