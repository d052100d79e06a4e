package handlers_test

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/handlers"
)

const testPushKey = "BEXAMPLE-public-key"

func withPush(d *handlers.Deps) { d.PushPublicKey, d.PushLoopback = testPushKey, true }

// browserSubscription is the JSON a browser's PushSubscription.toJSON()
// gives, with real keys.
func browserSubscription(t *testing.T, endpoint string) string {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	b, _ := json.Marshal(map[string]any{"endpoint": endpoint, "expirationTime": nil, "keys": map[string]string{
		"p256dh": base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()), "auth": base64.RawURLEncoding.EncodeToString(auth)}})
	return string(b)
}

type jsonAnswer struct {
	status  int
	header  http.Header
	message string
}

func (h *harness) postJSON(c *http.Client, path, body string, headers ...string) jsonAnswer {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a struct{ Message string }
	_ = json.Unmarshal(b, &a)
	return jsonAnswer{status: resp.StatusCode, header: resp.Header, message: a.Message}
}

func (h *harness) pushEndpoints(reader string) []string {
	h.t.Helper()
	l, err := h.store.PushSubscriptions(context.Background(), reader)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, s := range l {
		out = append(out, s.Endpoint)
	}
	return out
}

func TestServiceWorkerIsServedFromTheRoot(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.get(anonymous(), "/sw.js")
	if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "application/javascript") {
		t.Fatalf("/sw.js: %d %q", a.status, a.header.Get("Content-Type"))
	}
	for _, want := range []string{"notificationclick", "showNotification", "openWindow"} {
		if !strings.Contains(a.body, want) {
			t.Errorf("/sw.js does not mention %s", want)
		}
	}
	if a.header.Get("Cache-Control") != "no-cache" {
		t.Errorf("Cache-Control %q: a new build must replace the worker", a.header.Get("Cache-Control"))
	}
}

func TestPushKeyIsTheServersVAPIDKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withPush)
	if a := h.get(anonymous(), "/push/key"); a.status != http.StatusSeeOther {
		t.Errorf("anonymous /push/key: %d, want the sign-in redirect", a.status)
	}
	a := h.get(h.client("reader-2"), "/push/key")
	var got struct{ Key string }
	_ = json.Unmarshal([]byte(a.body), &got)
	if a.status != http.StatusOK || got.Key != testPushKey {
		t.Fatalf("/push/key: %d %q", a.status, a.body)
	}
}

func TestSubscribingABrowserToWebPush(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withPush)
	ada, bo := h.client("ada"), h.client("bo")
	endpoint := "https://push.example.net/send/abc123"
	valid := browserSubscription(t, endpoint)
	cases := []struct {
		name    string
		client  *http.Client
		body    string
		headers []string
		status  int
		say     string
	}{
		{"an anonymous browser is sent to sign in", anonymous(), valid, nil, http.StatusSeeOther, ""},
		{"a cross-site post is refused even with a session", ada, valid, []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, http.StatusForbidden, ""},
		{"garbage is not a subscription", ada, `{"endpoint": nope`, nil, http.StatusBadRequest, "not a push subscription"},
		{"a form post is not JSON", ada, valid, []string{"Content-Type", "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType, "as JSON"},
		{"an oversized body is refused", ada, `{"endpoint":"` + strings.Repeat("a", 5000) + `"}`, nil, http.StatusRequestEntityTooLarge, "larger"},
		{"a plain http endpoint off loopback is refused", ada, browserSubscription(t, "http://push.example.net/x"), nil, http.StatusBadRequest, "https"},
		{"an endpoint with no host is refused", ada, browserSubscription(t, "https:///x"), nil, http.StatusBadRequest, "endpoint"},
		{"keys that are not a P-256 point are refused", ada, `{"endpoint":"https://push.example.net/y","keys":{"p256dh":"AAAA","auth":"AAAAAAAAAAAAAAAAAAAAAA"}}`, nil, http.StatusBadRequest, "keys"},
	}
	for _, tc := range cases {
		a := h.postJSON(tc.client, "/push/subscriptions", tc.body, tc.headers...)
		if a.status != tc.status || !strings.Contains(a.message, tc.say) {
			t.Errorf("%s: %d %q, want %d %q", tc.name, a.status, a.message, tc.status, tc.say)
		}
		if got := h.pushEndpoints("ada"); len(got) != 0 {
			t.Fatalf("%s: stored %v", tc.name, got)
		}
	}

	if a := h.postJSON(ada, "/push/subscriptions", valid); a.status != http.StatusCreated {
		t.Fatalf("a browser's subscription: %d %q", a.status, a.message)
	}
	if got := h.pushEndpoints("ada"); len(got) != 1 || got[0] != endpoint {
		t.Fatalf("stored %v", got)
	}
	// Subscribing a browser turns Ada's Web Push on, as the button says.
	if set, err := h.store.ReaderSettings(context.Background(), "ada"); err != nil || !set.Push {
		t.Fatalf("after subscribing, push is %v (%v)", set.Push, err)
	}
	unsubscribe := `{"endpoint":"` + endpoint + `"}`
	if a := h.postJSON(bo, "/push/subscriptions/delete", unsubscribe); a.status != http.StatusNotFound {
		t.Fatalf("Bo unsubscribing Ada's browser: %d", a.status)
	}
	if a := h.postJSON(anonymous(), "/push/subscriptions/delete", unsubscribe); a.status != http.StatusSeeOther {
		t.Fatalf("an anonymous unsubscribe: %d", a.status)
	}
	if got := h.pushEndpoints("ada"); len(got) != 1 {
		t.Fatalf("a refused unsubscribe deleted the row: %v", got)
	}
	if a := h.postJSON(ada, "/push/subscriptions/delete", unsubscribe); a.status != http.StatusOK {
		t.Fatalf("Ada unsubscribing: %d %q", a.status, a.message)
	}
	if got := h.pushEndpoints("ada"); len(got) != 0 {
		t.Fatalf("left after unsubscribe: %v", got)
	}
}

func TestTheStandInPushServiceNeedsTheTestsOption(t *testing.T) {
	t.Parallel()
	loop := browserSubscription(t, "http://127.0.0.1:9/push/x")
	off := newHarness(t, func(d *handlers.Deps) { d.PushPublicKey = testPushKey })
	if a := off.postJSON(off.client("ada"), "/push/subscriptions", loop); a.status != http.StatusBadRequest {
		t.Fatalf("an http loopback endpoint without PushLoopback: %d", a.status)
	}
	on := newHarness(t, withPush)
	if a := on.postJSON(on.client("ada"), "/push/subscriptions", loop); a.status != http.StatusCreated {
		t.Fatalf("an http loopback endpoint with PushLoopback: %d %q", a.status, a.message)
	}
}

// TestUnsubscribingAnEndpointWithANulIsNotSubscribed: JSON may carry a NUL
// (\u0000), which PostgreSQL refuses; the answer is the plain 404, not a 500.
func TestUnsubscribingAnEndpointWithANulIsNotSubscribed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withPush)
	a := h.postJSON(h.client("ada"), "/push/subscriptions/delete", `{"endpoint":"https://push.example.net/\u0000"}`)
	if a.status != http.StatusNotFound || !strings.Contains(a.message, "not subscribed") {
		t.Errorf("a NUL endpoint: %d %q; want 404", a.status, a.message)
	}
	if strings.Contains(h.logs.String(), "level=ERROR") {
		t.Errorf("a NUL endpoint reached an ERROR line:\n%s", h.logs)
	}
}

// An endpoint is the browser that subscribed it: posting one another Reader
// holds is refused and moves nothing, while the holder posting it again
// renews its keys in the same row.
func TestAnotherReadersEndpointIsRefusedAndStaysTheirs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withPush)
	ada, ben := h.client("ada"), h.client("ben")
	endpoint := "https://push.example.net/send/ada-laptop"
	row := func() string {
		return h.text(`SELECT coalesce(string_agg(reader_id || ' ' || p256dh, ','), '') FROM push_subscriptions WHERE endpoint = $1`, endpoint)
	}
	first := browserSubscription(t, endpoint)
	if a := h.postJSON(ada, "/push/subscriptions", first); a.status != http.StatusCreated {
		t.Fatalf("Ada's subscription: %d %q", a.status, a.message)
	}
	held := row()
	a := h.postJSON(ben, "/push/subscriptions", browserSubscription(t, endpoint))
	if a.status != http.StatusConflict || !strings.Contains(a.message, "another Reader") {
		t.Errorf("Ben posting Ada's endpoint: %d %q, want 409 saying another Reader holds it", a.status, a.message)
	}
	if got := row(); got != held || !strings.HasPrefix(got, "ada ") {
		t.Errorf("after Ben's post the endpoint's row is %q, want Ada's untouched %q", got, held)
	}
	if set, err := h.store.ReaderSettings(context.Background(), "ben"); err != nil || set.Push {
		t.Errorf("a refused subscription turned Ben's Web Push on (%v)", err)
	}
	if a := h.postJSON(ada, "/push/subscriptions", first); a.status != http.StatusCreated || row() != held {
		t.Errorf("Ada posting the same subscription again: %d, row %q", a.status, row())
	}
	if a := h.postJSON(ada, "/push/subscriptions", browserSubscription(t, endpoint)); a.status != http.StatusCreated {
		t.Fatalf("Ada renewing her keys: %d %q", a.status, a.message)
	}
	if got := row(); got == held || !strings.HasPrefix(got, "ada ") || strings.Contains(got, ",") {
		t.Errorf("after Ada renews her keys the row is %q (was %q): want one row of Ada's with the new key", got, held)
	}
}

// JSON's decoder turns bytes that are not UTF-8 (and lone surrogates) into
// U+FFFD; an endpoint that held them is not the push service's address and
// is refused, never stored altered.
func TestAnEndpointThatIsNotUTF8IsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withPush)
	ada := h.client("ada")
	valid := browserSubscription(t, "https://push.example.net/send/PLACE")
	for _, tc := range []struct{ name, endpoint string }{
		{"a raw byte 0xff", "https://push.example.net/send/\xff"},
		{"a lone surrogate", `https://push.example.net/send/\ud800`},
		{"the replacement character itself", "https://push.example.net/send/\uFFFD"},
	} {
		body := strings.Replace(valid, "PLACE", strings.TrimPrefix(tc.endpoint, "https://push.example.net/send/"), 1)
		if a := h.postJSON(ada, "/push/subscriptions", body); a.status != http.StatusBadRequest {
			t.Errorf("%s: %d %q, want 400", tc.name, a.status, a.message)
		}
		if n := h.text(`SELECT count(*)::text FROM push_subscriptions`); n != "0" {
			t.Fatalf("%s: %s rows stored", tc.name, n)
		}
	}
}
