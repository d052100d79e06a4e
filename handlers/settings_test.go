package handlers_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/handlers"
)

// settingsForm is a full form as the page posts it.
func settingsForm(kv ...string) url.Values {
	f := url.Values{"digest_hour": {"8"}, "zone": {"UTC"}}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Set(kv[i], kv[i+1])
	}
	return f
}

func withReadersWebhook(d *handlers.Deps) { d.ReadersWebhook = true }

func TestSettingsNeedASignedInReaderAndASameOriginPost(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, p := range []string{"/settings"} {
		if a := h.get(anonymous(), p); a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/login") {
			t.Errorf("anonymous GET %s: %d to %q", p, a.status, a.header.Get("Location"))
		}
	}
	for _, p := range []string{"/settings", "/settings/feed/new", "/settings/feed/off"} {
		if a := h.post(anonymous(), p, settingsForm("feed", "1")); a.status != http.StatusSeeOther || !strings.HasPrefix(a.header.Get("Location"), "/login") {
			t.Errorf("anonymous POST %s: %d", p, a.status)
		}
	}
	c := h.client(readerA)
	a := h.post(c, "/settings", settingsForm("feed", "1"), "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
	if a.status != http.StatusForbidden {
		t.Errorf("a cross-site POST answered %d", a.status)
	}
	if n := h.text(`SELECT count(*)::text FROM reader_settings`); n != "0" {
		t.Errorf("refused posts saved %s rows", n)
	}
	page := h.get(c, "/settings")
	if page.status != http.StatusOK || page.find(`nav a[href="/settings"][aria-current="page"]`).Length() != 1 {
		t.Errorf("GET /settings: %d, nav link current: %d", page.status, page.find(`nav a[href="/settings"]`).Length())
	}
}

func TestSettingsSaveEveryFieldAndAMissingCheckboxIsOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withReadersWebhook)
	c := h.client(readerA)
	first := h.get(c, "/settings")
	if first.testid("settings-zone").AttrOr("data-browser-zone", "none") == "none" {
		t.Error("a Reader with no zone saved gets no browser zone")
	}
	for _, id := range []string{"settings-discord", "settings-feed", "settings-push", "settings-digest"} {
		if _, on := first.testid(id).Attr("checked"); on {
			t.Errorf("%s is on before the Reader turned it on", id)
		}
	}
	if first.find(`#push-subscribe`).Length() != 1 {
		t.Error("no container for the Web Push subscribe control")
	}
	a := h.post(c, "/settings", settingsForm("discord", "1", "push", "1", "digest", "1", "digest_hour", "21", "zone", "America/New_York"))
	if a.status != http.StatusOK || !strings.Contains(a.testid("message").Text(), "Saved") {
		t.Fatalf("save answered %d %q", a.status, a.testid("message").Text())
	}
	got := h.text(`SELECT concat_ws(',', discord, feed, push, digest, digest_hour, zone) FROM reader_settings WHERE reader_id = $1`, readerA)
	if got != "t,f,t,t,21,America/New_York" {
		t.Errorf("stored %q", got)
	}
	page := h.get(c, "/settings")
	if _, on := page.testid("settings-push").Attr("checked"); !on || page.testid("settings-zone").AttrOr("value", "") != "America/New_York" ||
		page.find(`select[name=digest_hour] option[selected]`).AttrOr("value", "") != "21" {
		t.Error("the page does not show what was saved")
	}
	if _, ok := page.testid("settings-zone").Attr("data-browser-zone"); ok {
		t.Error("the browser's zone would overwrite the saved one")
	}
	// Every box left out: each is off, the hour and zone kept.
	h.post(c, "/settings", url.Values{})
	if got := h.text(`SELECT concat_ws(',', discord, feed, push, digest, digest_hour, zone) FROM reader_settings WHERE reader_id = $1`, readerA); got != "f,f,f,f,21,America/New_York" {
		t.Errorf("after an empty form: %q", got)
	}
}

func TestEachBadSettingIsRefusedWithASentenceNamingItsField(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.client(readerA)
	cases := []struct {
		name  string
		form  url.Values
		field string
	}{
		{"a checkbox that is not 1", settingsForm("feed", "yes"), "feed"},
		{"a checkbox sent twice", url.Values{"push": {"1", "1"}}, "push"},
		{"an hour past 23", settingsForm("digest_hour", "24"), "digest_hour"},
		{"an hour below 0", settingsForm("digest_hour", "-1"), "digest_hour"},
		{"an hour that is not a number", settingsForm("digest_hour", "eight"), "digest_hour"},
		{"a zone no database knows", settingsForm("zone", "Mars/Olympus_Mons"), "zone"},
		{"the server's own zone", settingsForm("zone", "Local"), "zone"},
		{"an empty zone", settingsForm("zone", ""), "zone"},
		{"a path for a zone", settingsForm("zone", "../../etc/passwd"), "zone"},
		{"Discord when the owner has not set it up", settingsForm("discord", "1"), "discord"},
	}
	for _, k := range cases {
		a := h.post(c, "/settings", k.form)
		msg := a.testid("message").Text()
		if a.status != http.StatusBadRequest || !strings.Contains(msg, "The field "+k.field+" ") {
			t.Errorf("%s: %d %q", k.name, a.status, msg)
		}
	}
	if n := h.text(`SELECT count(*)::text FROM reader_settings`); n != "0" {
		t.Errorf("refused forms saved %s rows", n)
	}
	if strings.Contains(h.logs.String(), "level=ERROR") {
		t.Errorf("a bad field reached an ERROR line:\n%s", h.logs)
	}
}

func TestTheDiscordOptionSaysWhyItIsOff(t *testing.T) {
	t.Parallel()
	off := newHarness(t)
	a := off.get(off.client(readerA), "/settings")
	if _, dis := a.testid("settings-discord").Attr("disabled"); !dis || a.testid("discord-off").Length() != 1 {
		t.Error("without READERS_WEBHOOK_URL the option is not disabled with its sentence")
	}
	on := newHarness(t, withReadersWebhook)
	a = on.get(on.client(readerA), "/settings")
	if _, dis := a.testid("settings-discord").Attr("disabled"); dis || a.testid("discord-off").Length() != 0 {
		t.Error("with READERS_WEBHOOK_URL the option is still off")
	}
	local := on.client("local-0123456789abcdef")
	a = on.get(local, "/settings")
	if _, dis := a.testid("settings-discord").Attr("disabled"); !dis || !strings.Contains(a.testid("discord-local").Text(), "Discord sign-in") {
		t.Error("a local-mode Reader is offered Discord mentions")
	}
	if a := on.post(local, "/settings", settingsForm("discord", "1")); a.status != http.StatusBadRequest || !strings.Contains(a.testid("message").Text(), "Discord sign-in") {
		t.Errorf("a local-mode Reader turning Discord on: %d %q", a.status, a.testid("message").Text())
	}
}

func TestTheFeedAddressIsShownOnceStoredAsItsHMACAndReplaceable(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.client(readerA)
	a := h.post(c, "/settings", settingsForm("feed", "1"))
	addr := strings.TrimSpace(a.testid("feed-url").Text())
	prefix := h.srv.URL + "/feeds/"
	if a.status != http.StatusOK || !strings.HasPrefix(addr, prefix) || !strings.HasSuffix(addr, ".atom") {
		t.Fatalf("turning the feed on answered %d with %q", a.status, addr)
	}
	secret := strings.TrimSuffix(strings.TrimPrefix(addr, prefix), ".atom")
	m := hmac.New(sha256.New, []byte(testTokenKey))
	m.Write([]byte(secret))
	if got := h.text(`SELECT encode(feed_secret_hash, 'hex') FROM reader_settings WHERE reader_id = $1`, readerA); got != hexOf(m.Sum(nil)) {
		t.Error("the stored hash is not HMAC-SHA256 under TOKEN_KEY")
	}
	if strings.Contains(h.text(`SELECT t::text FROM reader_settings t`), secret) || strings.Contains(h.logs.String(), secret) {
		t.Error("the secret is stored or logged")
	}
	if feed := h.get(anonymous(), "/feeds/"+secret+".atom"); feed.status != http.StatusOK {
		t.Fatalf("the new address answered %d", feed.status)
	}
	page := h.get(c, "/settings")
	if page.testid("feed-url").Length() != 0 || page.testid("feed-new").Length() != 1 {
		t.Error("the address is shown again, or cannot be replaced")
	}
	// Saving again with the feed on keeps the address.
	if a := h.post(c, "/settings", settingsForm("feed", "1")); a.testid("feed-url").Length() != 0 {
		t.Error("saving again made a new address")
	}
	a = h.post(c, "/settings/feed/new", nil)
	next := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(a.testid("feed-url").Text()), prefix), ".atom")
	if next == "" || next == secret {
		t.Fatalf("a new address: %q", next)
	}
	if h.get(anonymous(), "/feeds/"+secret+".atom").status != http.StatusNotFound || h.get(anonymous(), "/feeds/"+next+".atom").status != http.StatusOK {
		t.Error("the old address still works, or the new one does not")
	}
	if a := h.post(c, "/settings/feed/off", nil); a.status != http.StatusSeeOther {
		t.Fatalf("turn off answered %d", a.status)
	}
	if h.get(anonymous(), "/feeds/"+next+".atom").status != http.StatusNotFound {
		t.Error("a revoked address still answers")
	}
	if page := h.get(c, "/settings"); page.testid("feed-none").Length() != 1 {
		t.Error("after turning it off the page still offers the address")
	}
}
