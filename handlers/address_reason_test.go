package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// An address refused is refused for its own reason, the one `mangabookmark
// fetch` prints (adapters.Recognise), in the add box, the owner's box, an
// import line and the API (whose error word stays unknown_site): an http
// address of a Site is not "not a supported Site", and neither is a kagane
// address that is no Series or chapter page. Only a host of no Site names
// the Sites there are.
func TestARefusedAddressIsAnsweredWithTheReasonFetchGives(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.apiToken(readerA, "")
	cases := []struct{ address, reason string }{
		{"http://asurascans.com/comics/omniscient-reader", `not https (the address uses "http")`},
		{"https://kagane.org/series/xyz123", "kagane address, but not a Series or chapter page"},
		{"https://example.com/manga/x", `unknown site "example.com" (the Sites are asurascans, demonicscans, comix, kagane, novelfull, lightnovelworld)`},
	}
	for _, tc := range cases {
		for name, a := range map[string]answer{
			"the add box":     h.post(h.client(readerA), "/", url.Values{"urls": {tc.address}}),
			"the owner's box": h.post(h.owner(), "/admin/series", url.Values{"urls": {tc.address}}),
			"an import line":  h.importFile(h.client(readerA), "list.txt", []byte(tc.address+"\n")),
		} {
			got := a.testid("add-result").Text()
			if a.status != http.StatusOK || !strings.Contains(got, tc.reason) || !strings.Contains(got, "Nothing was added.") {
				t.Errorf("%s answered %s with %d %q, want the reason %q", name, tc.address, a.status, got, tc.reason)
			}
			if !strings.Contains(tc.reason, "unknown site") && strings.Contains(got, "supported Site") {
				t.Errorf("%s calls %s not an address of a supported Site: %q", name, tc.address, got)
			}
		}
		a := h.api("POST", "/api/v1/progress", tok, `{"url":"`+tc.address+`","chapter":3}`)
		if msg, _ := a.json["message"].(string); a.status != 400 || a.word() != "unknown_site" || !strings.Contains(msg, tc.reason) ||
			(!strings.Contains(tc.reason, "unknown site") && strings.Contains(msg, "supported Site")) {
			t.Errorf("the API answered %s with %d %s %q, want unknown_site with %q", tc.address, a.status, a.word(), msg, tc.reason)
		}
	}
	if got := h.text(importedQuery); got != "" {
		t.Errorf("a refused address added %q", got)
	}
}
