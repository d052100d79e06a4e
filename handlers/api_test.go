package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/static"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// apiToken creates a Reader (if new) and a userscript token for them.
func (h *harness) apiToken(readerID, label string) string {
	h.t.Helper()
	storetest.Ensure(h.t, h.pool, storetest.Reader{ID: readerID, Name: "Name of " + readerID})
	tok, hash := handlers.NewAPIToken(h.deps.TokenKey)
	if _, err := h.store.CreateToken(context.Background(), readerID, hash, label, time.Time{}); err != nil {
		h.t.Fatal(err)
	}
	return tok
}

type apiAnswer struct {
	status int
	header http.Header
	raw    string
	json   map[string]any
}

func (a apiAnswer) word() string { s, _ := a.json["error"].(string); return s }

// api calls the token API. headers are name, value pairs.
func (h *harness) api(method, path, token, body string, headers ...string) apiAnswer {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := anonymous().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := apiAnswer{status: resp.StatusCode, header: resp.Header, raw: string(b)}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &a.json); err != nil {
			h.t.Fatalf("%s %s answered %d with a body that is not a JSON object: %q", method, path, resp.StatusCode, b)
		}
	}
	return a
}

// progressOf reads a Reader's Progress on a Series ("" = none, "-" = no Bookmark).
func (h *harness) progressOf(reader, site, id string) string {
	h.t.Helper()
	var p *string
	err := h.pool.QueryRow(context.Background(), `SELECT progress_num::text FROM bookmarks WHERE reader_id = $1 AND site = $2 AND series_id = $3`, reader, site, id).Scan(&p)
	if err != nil {
		return "-"
	}
	if p == nil {
		return ""
	}
	return *p
}

func dig(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

const asuraSeries = "https://asurascans.com/comics/nano-machine"

// seedAsura adds the Series the API tests read, bookmarked by r1 at progress 2.
func (h *harness) seedAsura() {
	h.t.Helper()
	h.seed([]fixture{{id: "nano-machine", title: "Nano Machine", url: asuraSeries, chapter: "12.5", checkedAgo: time.Minute, bookmarked: true}})
}

func TestAPIMeNamesTheTokensReaderAndReadsNoCookie(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.apiToken("r1", "laptop Firefox")
	a := h.api("GET", "/api/v1/me", tok, "")
	if a.status != 200 || dig(a.json, "reader", "id") != "r1" || dig(a.json, "reader", "name") != "Name of r1" || dig(a.json, "token", "label") != "laptop Firefox" {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("content type %q", ct)
	}
	for name := range a.header {
		if strings.HasPrefix(name, "Access-Control-") || name == "Set-Cookie" {
			t.Errorf("the API answered %s", name)
		}
	}
	// A signed-in browser session is no way in: the API reads no cookie.
	c := h.client("r1")
	req, _ := http.NewRequest("GET", h.srv.URL+"/api/v1/me", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a session cookie without a token answered %d", resp.StatusCode)
	}
}

// The userscript managers send four shapes of Origin and Sec-Fetch-Site; a
// valid token is accepted under each, and none lets a missing token in.
func TestAPIIgnoresOriginAndSecFetchSite(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedAsura()
	tok := h.apiToken("r1", "")
	shapes := [][]string{
		{"Origin", "moz-extension://6b1d1c7c-0c7e-4c4e-9d6f-1a2b3c4d5e6f"},
		{"Origin", "chrome-extension://abcdefghijklmnopabcdefghijklmnop", "Sec-Fetch-Site", "none"},
		{},
		{"Origin", "https://asurascans.com", "Sec-Fetch-Site", "cross-site"},
	}
	for i, hdr := range shapes {
		body := fmt.Sprintf(`{"url":%q,"chapter":%d}`, asuraSeries+"/chapter/"+fmt.Sprint(3+i), 3+i)
		if a := h.api("POST", "/api/v1/progress", tok, body, hdr...); a.status != 200 || a.json["applied"] != true {
			t.Errorf("shape %v with a token: %d %s", hdr, a.status, a.raw)
		}
		if a := h.api("POST", "/api/v1/progress", "", body, hdr...); a.status != 401 || a.word() != "token_missing" {
			t.Errorf("shape %v without a token: %d %s", hdr, a.status, a.raw)
		}
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "6" {
		t.Fatalf("progress %q, want 6", got)
	}
}

func TestAPIBookmarksAreMineWithAnETagThatAnswers304(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedAsura()
	h.seed([]fixture{{id: "not-mine", url: addr, chapter: "9"}})
	storetest.Insert(t, h.pool, storetest.Reader{ID: "r2"})
	storetest.Insert(t, h.pool, storetest.Bookmark{Reader: "r2", Site: word.Asurascans, Series: "not-mine", Progress: "1"})
	tok := h.apiToken("r1", "")
	a := h.api("GET", "/api/v1/bookmarks", tok, "")
	list, _ := a.json["bookmarks"].([]any)
	if a.status != 200 || len(list) != 1 {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	b := list[0].(map[string]any)
	if b["series_id"] != "nano-machine" || b["latest_chapter"] != 12.5 || b["progress"] != 2.0 || b["new"] != true || b["title"] != "Nano Machine" {
		t.Fatalf("row %v", b)
	}
	if !strings.Contains(a.raw, `"latest_chapter":12.5`) || b["cover"] != "" {
		t.Errorf("numbers or cover not as sent: %s", a.raw)
	}
	etag := a.header.Get("ETag")
	if etag == "" || a.header.Get("Cache-Control") != "private, no-cache" {
		t.Fatalf("etag %q cache %q", etag, a.header.Get("Cache-Control"))
	}
	if again := h.api("GET", "/api/v1/bookmarks", tok, "", "If-None-Match", etag); again.status != http.StatusNotModified || again.raw != "" {
		t.Fatalf("If-None-Match with the current ETag: %d %q", again.status, again.raw)
	}
	if again := h.api("GET", "/api/v1/bookmarks", tok, "", "If-None-Match", `W/"other", `+etag); again.status != http.StatusNotModified {
		t.Fatalf("a list of ETags holding the current one: %d", again.status)
	}
	// Progress moves: the list is new, and so is its ETag.
	h.api("POST", "/api/v1/progress", tok, `{"url":"`+asuraSeries+`","chapter":12.5}`)
	changed := h.api("GET", "/api/v1/bookmarks", tok, "", "If-None-Match", etag)
	if changed.status != 200 || changed.header.Get("ETag") == etag || dig(changed.json["bookmarks"].([]any)[0], "new") != false {
		t.Fatalf("after a change: %d %s", changed.status, changed.raw)
	}
}

func TestAPILookupSaysSupportedSeriesAndMyBookmark(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedAsura()
	tok := h.apiToken("r1", "")
	other := h.apiToken("r2", "")

	a := h.api("GET", "/api/v1/lookup?url=https://example.com/comics/x", tok, "")
	if a.status != 200 || a.json["supported"] != false || a.json["reason"] == "" {
		t.Fatalf("no Site: %d %s", a.status, a.raw)
	}
	a = h.api("GET", "/api/v1/lookup?url=https://asurascans.com/comics/unknown-work-1a2b3c4d/chapter/3", tok, "")
	if a.status != 200 || a.json["supported"] != true || a.json["series_id"] != "unknown-work" || a.json["series"] != nil || a.json["bookmark"] != nil {
		t.Fatalf("a Series nobody added: %d %s", a.status, a.raw)
	}
	a = h.api("GET", "/api/v1/lookup?url=https://asurascans.com/comics/nano-machine-7f873ca6/chapter/270", tok, "")
	if a.status != 200 || dig(a.json, "series", "title") != "Nano Machine" || dig(a.json, "series", "latest_chapter") != 12.5 || dig(a.json, "bookmark", "progress") != 2.0 {
		t.Fatalf("my Series: %d %s", a.status, a.raw)
	}
	a = h.api("GET", "/api/v1/lookup?url="+asuraSeries, other, "")
	if a.status != 200 || a.json["series"] == nil || a.json["bookmark"] != nil {
		t.Fatalf("another Reader sees my Bookmark: %d %s", a.status, a.raw)
	}
	if a := h.api("GET", "/api/v1/lookup", tok, ""); a.status != 400 || a.word() != "bad_request" {
		t.Fatalf("no url: %d %s", a.status, a.raw)
	}
}

func TestAPIProgressRisesNeverFallsUnlessAskedAndCanBookmark(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedAsura()
	tok := h.apiToken("r1", "")
	post := func(body string) apiAnswer { return h.api("POST", "/api/v1/progress", tok, body) }

	a := post(`{"url":"https://asurascans.com/comics/nano-machine-7f873ca6/chapter/10","chapter":10}`)
	if a.status != 200 || a.json["applied"] != true || dig(a.json, "bookmark", "progress") != 10.0 ||
		dig(a.json, "bookmark", "progress_url") != "https://asurascans.com/comics/nano-machine-7f873ca6/chapter/10" {
		t.Fatalf("raise: %d %s", a.status, a.raw)
	}
	if a := post(`{"url":"` + asuraSeries + `","chapter":4}`); a.status != 200 || a.json["applied"] != false || dig(a.json, "bookmark", "progress") != 10.0 {
		t.Fatalf("a lower number: %d %s", a.status, a.raw)
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "10" {
		t.Fatalf("a lower number moved Progress to %s", got)
	}
	if a := post(`{"url":"` + asuraSeries + `","chapter":4,"backwards":true}`); a.status != 200 || a.json["applied"] != true {
		t.Fatalf("backwards: %d %s", a.status, a.raw)
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "4" {
		t.Fatalf("backwards left Progress at %s", got)
	}

	// A Series not yet known: without "bookmark" nothing is created…
	const fresh = "https://demonicscans.org/title/Mr.-Magical-Girl/chapter/29/1"
	if a := post(`{"url":"` + fresh + `","chapter":29}`); a.status != 404 || a.word() != "not_bookmarked" {
		t.Fatalf("not bookmarked: %d %s", a.status, a.raw)
	}
	if _, err := h.store.GetSeries(context.Background(), "demonicscans", "Mr.-Magical-Girl"); err == nil {
		t.Fatal("a refused write created the Series")
	}
	// …with it, the Series, its Forced Poll, the Bookmark and the Progress.
	wakes := h.listenWakes()
	a = post(`{"url":"` + fresh + `","chapter":29,"bookmark":true}`)
	if a.status != 200 || a.json["applied"] != true || dig(a.json, "bookmark", "url") != "https://demonicscans.org/manga/Mr.-Magical-Girl" {
		t.Fatalf("bookmark: %d %s", a.status, a.raw)
	}
	s, err := h.store.GetSeries(context.Background(), "demonicscans", "Mr.-Magical-Girl")
	if err != nil || !s.ForcePollAt.Equal(t0) || s.Kind != "manga" {
		t.Fatalf("series %+v %v", s, err)
	}
	if got := h.progressOf("r1", "demonicscans", "Mr.-Magical-Girl"); got != "29" {
		t.Fatalf("progress %q", got)
	}
	if w := wakes(); !slices.Contains(w, "demonicscans") {
		t.Fatalf("the Lane was not woken: %v", w)
	}
	// Bookmark alone, no chapter.
	a = post(`{"url":"https://novelfull.com/lord-of-the-mysteries.html","bookmark":true}`)
	if a.status != 200 || a.json["applied"] != false || dig(a.json, "bookmark", "progress") != nil {
		t.Fatalf("bookmark without a chapter: %d %s", a.status, a.raw)
	}
}

// A chapter address names its chapter: a different "chapter" beside it is
// refused, since the address is kept as where the Reader's Progress is.
func TestAPIProgressRefusesAChapterItsAddressContradicts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedAsura()
	tok := h.apiToken("r1", "")
	post := func(body string) apiAnswer { return h.api("POST", "/api/v1/progress", tok, body) }
	const ch99 = "https://asurascans.com/comics/nano-machine-7f873ca6/chapter/99"

	for _, body := range []string{
		`{"url":"` + ch99 + `","chapter":7}`,
		`{"url":"` + ch99 + `","chapter":99.5,"backwards":true}`,
	} {
		a := post(body)
		msg, _ := a.json["message"].(string)
		if a.status != http.StatusUnprocessableEntity || a.word() != "chapter_mismatch" || !strings.Contains(msg, "chapter 99 ") {
			t.Fatalf("%s: %d %s; want 422 chapter_mismatch naming chapter 99", body, a.status, a.raw)
		}
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "2" {
		t.Fatalf("a refused write moved Progress to %s", got)
	}
	// Refused before anything is created: no Series, no Bookmark.
	const fresh = "https://demonicscans.org/title/Mr.-Magical-Girl/chapter/29/1"
	if a := post(`{"url":"` + fresh + `","chapter":30,"bookmark":true}`); a.status != 422 || a.word() != "chapter_mismatch" || !strings.Contains(a.raw, "30") {
		t.Fatalf("with bookmark: %d %s", a.status, a.raw)
	}
	if _, err := h.store.GetSeries(context.Background(), "demonicscans", "Mr.-Magical-Girl"); err == nil {
		t.Fatal("a refused write created the Series")
	}

	// The same number, however written, is the chapter read.
	if a := post(`{"url":"` + ch99 + `","chapter":99.00}`); a.status != 200 || a.json["applied"] != true || dig(a.json, "bookmark", "progress_url") != ch99 {
		t.Fatalf("the chapter the address names: %d %s", a.status, a.raw)
	}
	// A Series address, or a chapter address without a number (Kagane's
	// reader pages), takes the number as sent.
	if a := post(`{"url":"` + asuraSeries + `","chapter":100}`); a.status != 200 || a.json["applied"] != true {
		t.Fatalf("a Series address: %d %s", a.status, a.raw)
	}
	const kagane = "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162/reader/019c2bda-0000-7000-8000-000000000003"
	if a := post(`{"url":"` + kagane + `","chapter":5,"bookmark":true}`); a.status != 200 || dig(a.json, "bookmark", "progress") != 5.0 {
		t.Fatalf("a Kagane reader page: %d %s", a.status, a.raw)
	}
}

func TestAPISightingsRaiseLatestWithAttribution(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedAsura()
	h.seed([]fixture{{id: "failing", url: addr, chapter: "5", checkedAgo: time.Minute, failure: "no_chapter", failingFor: 13 * time.Hour}})
	tok := h.apiToken("r2", "")
	post := func(body string) apiAnswer { return h.api("POST", "/api/v1/sightings", tok, body) }

	a := post(`{"url":"` + asuraSeries + `/chapter/13","chapters":[13, 14.5, 12]}`)
	if a.status != 200 || a.json["known"] != true || a.json["raised"] != true || a.json["latest_chapter"] != 14.5 {
		t.Fatalf("raise: %d %s", a.status, a.raw)
	}
	s, _ := h.store.GetSeries(context.Background(), "asurascans", "nano-machine")
	if s.LatestRaisedBy == nil || *s.LatestRaisedBy != "r2" || *s.LatestChapter != "14.5" {
		t.Fatalf("series after the Sighting: %+v", s)
	}
	if a := post(`{"url":"` + asuraSeries + `","chapters":[3]}`); a.status != 200 || a.json["raised"] != false || a.json["latest_chapter"] != 14.5 {
		t.Fatalf("a lower Sighting: %d %s", a.status, a.raw)
	}
	if a := post(`{"url":"https://asurascans.com/comics/nobody-added","chapters":[3]}`); a.status != 200 || a.json["known"] != false {
		t.Fatalf("a Series nobody added: %d %s", a.status, a.raw)
	}
	// A number no Poll confirms, on a failing Series: the unverified filter.
	if a := post(`{"url":"https://asurascans.com/comics/failing","chapters":[6]}`); a.json["raised"] != true {
		t.Fatalf("%s", a.raw)
	}
	d, err := h.store.GetAdminSeries(context.Background(), "asurascans", "failing", t0)
	if err != nil || !d.Unverified {
		t.Fatalf("the raised number is not unverified: %+v %v", d, err)
	}
}

// Issue 22, item 11: a Sighting far above what the Site's page has shown
// is refused with the bound, and changes nothing; one within it raises.
func TestAPISightingFarAboveThePageIsImplausible(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed([]fixture{{id: "healthy", url: addr, chapter: "271", checkedAgo: time.Minute, bookmarked: true}})
	tok := h.apiToken("r2", "")
	post := func(body string) apiAnswer { return h.api("POST", "/api/v1/sightings", tok, body) }
	latest := func() store.Series {
		s, err := h.store.GetSeries(context.Background(), "asurascans", "healthy")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := post(`{"url":"https://asurascans.com/comics/healthy","chapters":[12, 9999999]}`)
	if a.status != http.StatusUnprocessableEntity || a.json["error"] != "implausible" ||
		!strings.Contains(fmt.Sprint(a.json["message"]), "at most 321") {
		t.Fatalf("a Sighting of 9999999 above a page that showed 271: %d %s", a.status, a.raw)
	}
	if s := latest(); *s.LatestChapter != "271" || s.LatestRaisedBy != nil {
		t.Fatalf("the refused Sighting changed the Series: %v by %v", *s.LatestChapter, s.LatestRaisedBy)
	}
	if a := post(`{"url":"https://asurascans.com/comics/healthy","chapters":[321]}`); a.status != 200 || a.json["raised"] != true {
		t.Fatalf("a Sighting at the bound: %d %s", a.status, a.raw)
	}
	if s := latest(); *s.LatestChapter != "321" || s.LatestRaisedBy == nil || *s.LatestRaisedBy != "r2" {
		t.Fatalf("after a Sighting at the bound: %v by %v", *s.LatestChapter, s.LatestRaisedBy)
	}
}

// Every error word, its status, a JSON body with a sentence, and nothing
// changed.
func TestAPIErrorsAnswerTheirStableWordAndChangeNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedAsura()
	tok := h.apiToken("r1", "")
	storetest.Insert(t, h.pool, storetest.Idempotency{Reader: "r1", Key: "running", RequestHash: []byte{0}, CreatedAt: t0})
	h.api("POST", "/api/v1/progress", tok, `{"url":"`+asuraSeries+`","chapter":1}`, "Idempotency-Key", "used")
	before := h.snapshot()
	good := `{"url":"` + asuraSeries + `","chapter":3}`
	cases := []struct {
		name, method, path, token, body string
		headers                         []string
		status                          int
		word                            string
	}{
		{"malformed JSON", "POST", "/api/v1/progress", tok, `{"url":`, nil, 400, "malformed_json"},
		{"two JSON values", "POST", "/api/v1/progress", tok, good + good, nil, 400, "malformed_json"},
		{"a JSON array", "POST", "/api/v1/sightings", tok, `[1,2]`, nil, 400, "malformed_json"},
		{"a wrong type", "POST", "/api/v1/progress", tok, `{"url":5,"chapter":3}`, nil, 400, "malformed_json"},
		{"an unknown field", "POST", "/api/v1/progress", tok, `{"url":"` + asuraSeries + `","chapter":3,"force":true}`, nil, 400, "unknown_field"},
		{"a reader field", "POST", "/api/v1/sightings", tok, `{"url":"` + asuraSeries + `","chapters":[3],"reader_id":"r2"}`, nil, 400, "unknown_field"},
		{"a negative chapter", "POST", "/api/v1/progress", tok, `{"url":"` + asuraSeries + `","chapter":-1}`, nil, 400, "not_a_chapter"},
		{"an exponent", "POST", "/api/v1/progress", tok, `{"url":"` + asuraSeries + `","chapter":1e3}`, nil, 400, "not_a_chapter"},
		{"five decimals", "POST", "/api/v1/progress", tok, `{"url":"` + asuraSeries + `","chapter":1.00001}`, nil, 400, "not_a_chapter"},
		{"a word", "POST", "/api/v1/sightings", tok, `{"url":"` + asuraSeries + `","chapters":[3,"twelve"]}`, nil, 400, "not_a_chapter"},
		{"a boolean chapter", "POST", "/api/v1/progress", tok, `{"url":"` + asuraSeries + `","chapter":true}`, nil, 400, "not_a_chapter"},
		{"a chapter sent as a string", "POST", "/api/v1/progress", tok, `{"url":"` + asuraSeries + `","chapter":"5"}`, nil, 400, "not_a_chapter"},
		{"a Sighting's chapter sent as a string", "POST", "/api/v1/sightings", tok, `{"url":"` + asuraSeries + `","chapters":["5"]}`, nil, 400, "not_a_chapter"},
		{"an address of no Site", "POST", "/api/v1/progress", tok, `{"url":"https://example.com/comics/x","chapter":3}`, nil, 400, "unknown_site"},
		{"a Sighting of no Site", "POST", "/api/v1/sightings", tok, `{"url":"http://asurascans.com/comics/x","chapters":[3]}`, nil, 400, "unknown_site"},
		{"no url", "POST", "/api/v1/progress", tok, `{"chapter":3}`, nil, 400, "bad_request"},
		{"no chapter and no bookmark", "POST", "/api/v1/progress", tok, `{"url":"` + asuraSeries + `"}`, nil, 400, "bad_request"},
		{"no chapters", "POST", "/api/v1/sightings", tok, `{"url":"` + asuraSeries + `","chapters":[]}`, nil, 400, "bad_request"},
		{"51 chapters", "POST", "/api/v1/sightings", tok, `{"url":"` + asuraSeries + `","chapters":[` + strings.Repeat("1,", 50) + `1]}`, nil, 400, "too_many_chapters"},
		{"a long key", "POST", "/api/v1/progress", tok, good, []string{"Idempotency-Key", strings.Repeat("k", 256)}, 400, "bad_request"},
		{"no token", "POST", "/api/v1/progress", "", good, nil, 401, "token_missing"},
		{"another scheme", "GET", "/api/v1/me", "", "", []string{"Authorization", "Basic cjE6cHc="}, 401, "token_missing"},
		{"an unknown token", "POST", "/api/v1/progress", "mbk_not-a-token", good, nil, 401, "token_invalid"},
		{"an unknown token reading", "GET", "/api/v1/bookmarks", "mbk_not-a-token", "", nil, 401, "token_invalid"},
		{"a body over 16 KiB", "POST", "/api/v1/sightings", tok, `{"url":"` + asuraSeries + `","chapters":[3]}` + strings.Repeat(" ", 16<<10), nil, 413, "body_too_large"},
		{"no such path", "GET", "/api/v1/nothing", tok, "", nil, 404, "not_found"},
		{"a GET on a write", "GET", "/api/v1/progress", tok, "", nil, 405, "method_not_allowed"},
		{"a key in flight", "POST", "/api/v1/progress", tok, good, []string{"Idempotency-Key", "running"}, 409, "idempotency_key_in_flight"},
		{"a key reused with another body", "POST", "/api/v1/progress", tok, good, []string{"Idempotency-Key", "used"}, 422, "idempotency_key_reused"},
		{"a key reused on another path", "POST", "/api/v1/sightings", tok, `{"url":"` + asuraSeries + `","chapter":1}`, []string{"Idempotency-Key", "used"}, 422, "idempotency_key_reused"},
		{"a chapter the address contradicts", "POST", "/api/v1/progress", tok, `{"url":"` + asuraSeries + `/chapter/99","chapter":7}`, nil, 422, "chapter_mismatch"},
	}
	for _, c := range cases {
		a := h.api(c.method, c.path, c.token, c.body, c.headers...)
		if a.status != c.status || a.word() != c.word {
			t.Errorf("%s: %d %q, want %d %q (%s)", c.name, a.status, a.word(), c.status, c.word, a.raw)
			continue
		}
		if msg, _ := a.json["message"].(string); len(msg) < 10 || !strings.HasSuffix(msg, ".") {
			t.Errorf("%s: message %q is not a sentence", c.name, msg)
		}
		if c.status == 405 && a.header.Get("Allow") != "POST" {
			t.Errorf("%s: Allow %q, want POST", c.name, a.header.Get("Allow"))
		}
		if c.status == 401 && a.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no WWW-Authenticate", c.name)
		}
	}
	if h.snapshot() != before {
		t.Fatal("a refused request changed the database")
	}
}

// An Idempotency-Key that is not UTF-8 text is the client's mistake: 400
// bad_request, and nothing applied.
func TestAnIdempotencyKeyThatIsNotTextIsABadRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedAsura()
	tok := h.apiToken("r1", "")
	before := h.progressRows()
	for _, key := range []string{"k-\xff", "k-\xc3\x28"} {
		a := h.api("POST", "/api/v1/progress", tok, `{"url":"`+asuraSeries+`","chapter":10}`, "Idempotency-Key", key)
		if a.status != http.StatusBadRequest || a.json["error"] != "bad_request" {
			t.Fatalf("key %q: %d %s", key, a.status, a.raw)
		}
	}
	if after := h.progressRows(); after != before {
		t.Fatalf("a refused request applied progress: %d rows with progress, %d before", after, before)
	}
}

func (h *harness) progressRows() int {
	h.t.Helper()
	var n int
	if err := h.pool.QueryRow(context.Background(), `SELECT count(*) FROM bookmarks WHERE progress_num IS NOT NULL`).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n
}

func TestAPIIdempotencyKeyReplaysTheFirstAnswerAndChangesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedAsura()
	tok := h.apiToken("r1", "")
	body := `{"url":"` + asuraSeries + `","chapter":10}`
	first := h.api("POST", "/api/v1/progress", tok, body, "Idempotency-Key", "k-1")
	if first.status != 200 || first.json["applied"] != true {
		t.Fatalf("%d %s", first.status, first.raw)
	}
	// Progress moves back by another request, so a replay that ran again
	// would raise it to 10 once more.
	h.api("POST", "/api/v1/progress", tok, `{"url":"`+asuraSeries+`","chapter":5,"backwards":true}`)
	again := h.api("POST", "/api/v1/progress", tok, body, "Idempotency-Key", "k-1")
	if again.status != 200 || again.raw != first.raw || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %q\nfirst: %q", again.status, again.raw, first.raw)
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "5" {
		t.Fatalf("the replay ran again: progress %s", got)
	}
	// The key is the Reader's own: another Reader's same key is a new request.
	other := h.apiToken("r2", "")
	if a := h.api("POST", "/api/v1/progress", other, `{"url":"`+asuraSeries+`","chapter":10,"bookmark":true}`, "Idempotency-Key", "k-1"); a.status != 200 || a.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("another Reader's key: %d %s", a.status, a.raw)
	}
	// Sightings replay too, and a refused first answer is replayed as refused.
	sb := `{"url":"` + asuraSeries + `","chapters":[20]}`
	s1 := h.api("POST", "/api/v1/sightings", tok, sb, "Idempotency-Key", "s-1")
	h.exec(`UPDATE series SET latest_chapter_num = 1, latest_raised_by = NULL WHERE series_id = 'nano-machine'`)
	s2 := h.api("POST", "/api/v1/sightings", tok, sb, "Idempotency-Key", "s-1")
	if s1.raw != s2.raw || s2.json["raised"] != true {
		t.Fatalf("sighting replay %q vs %q", s2.raw, s1.raw)
	}
	if s, _ := h.store.GetSeries(context.Background(), "asurascans", "nano-machine"); *s.LatestChapter != "1" {
		t.Fatalf("the Sighting replay raised Latest Chapter to %s", *s.LatestChapter)
	}
	bad := `{"url":"https://example.com/x","chapters":[20]}`
	b1 := h.api("POST", "/api/v1/sightings", tok, bad, "Idempotency-Key", "s-2")
	b2 := h.api("POST", "/api/v1/sightings", tok, bad, "Idempotency-Key", "s-2")
	if b1.status != 400 || b2.status != 400 || b1.raw != b2.raw {
		t.Fatalf("refused replay: %d %d", b1.status, b2.status)
	}
	// A key older than a day counts as new.
	h.exec(`UPDATE api_idempotency SET created_at = $1 WHERE key = 'k-1' AND reader_id = 'r1'`, t0.Add(-25*time.Hour))
	if a := h.api("POST", "/api/v1/progress", tok, body, "Idempotency-Key", "k-1"); a.header.Get("Idempotent-Replayed") != "" || a.json["applied"] != true {
		t.Fatalf("an expired key replayed: %s", a.raw)
	}
}

func TestAPIWritesAreLimitedPerTokenWithRetryAfter(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedAsura()
	tok, other := h.apiToken("r1", "a"), h.apiToken("r1", "b")
	body := `{"url":"` + asuraSeries + `","chapter":2}`
	for i := range 120 {
		if a := h.api("POST", "/api/v1/progress", tok, body); a.status != 200 {
			t.Fatalf("write %d: %d %s", i+1, a.status, a.raw)
		}
	}
	a := h.api("POST", "/api/v1/progress", tok, `{"url":"`+asuraSeries+`","chapter":50}`)
	if a.status != 429 || a.word() != "rate_limited" || a.header.Get("Retry-After") != "1" {
		t.Fatalf("write 121: %d %q retry-after %q", a.status, a.raw, a.header.Get("Retry-After"))
	}
	if got := h.progressOf("r1", "asurascans", "nano-machine"); got != "2" {
		t.Fatalf("the limited write ran: progress %s", got)
	}
	if a := h.api("GET", "/api/v1/bookmarks", tok, ""); a.status != 200 {
		t.Fatalf("reads are not limited: %d", a.status)
	}
	if a := h.api("POST", "/api/v1/progress", other, body); a.status != 200 {
		t.Fatalf("another token is limited too: %d", a.status)
	}
}

func TestAPIARevokedTokenAnswers401AtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := h.apiToken("r1", "phone")
	if a := h.api("GET", "/api/v1/me", tok, ""); a.status != 200 {
		t.Fatalf("%d", a.status)
	}
	ts, err := h.store.ListTokens(context.Background(), "r1")
	if err != nil || len(ts) != 1 {
		t.Fatal(ts, err)
	}
	if err := h.store.RevokeToken(context.Background(), "r1", ts[0].ID); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/api/v1/me", "/api/v1/bookmarks", "/api/v1/lookup?url=" + asuraSeries} {
		if a := h.api("GET", p, tok, ""); a.status != 401 || a.word() != "token_invalid" {
			t.Errorf("%s after revoking: %d %s", p, a.status, a.raw)
		}
	}
	if a := h.api("POST", "/api/v1/progress", tok, `{"url":"`+asuraSeries+`","chapter":1}`); a.status != 401 {
		t.Errorf("a write after revoking: %d", a.status)
	}
}

func TestAPITellsAnOlderUserscriptThatANewerOneExists(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(d *handlers.Deps) { d.UserscriptVersion = "1.4.0" })
	tok := h.apiToken("r1", "")
	for sent, want := range map[string]string{"1.3.9": "true", "1.4.0": "false", "1.10.0": "false", "garbage": "true", "0.9": "true"} {
		a := h.api("GET", "/api/v1/me", tok, "", "X-Userscript-Version", sent)
		if a.header.Get("X-Userscript-Latest") != "1.4.0" || a.header.Get("X-Userscript-Update-Available") != want {
			t.Errorf("sent %s: latest %q update %q", sent, a.header.Get("X-Userscript-Latest"), a.header.Get("X-Userscript-Update-Available"))
		}
	}
	// Also on an error answer, so a script with a revoked token still learns it.
	if a := h.api("GET", "/api/v1/me", "", "", "X-Userscript-Version", "1.0.0"); a.status != 401 || a.header.Get("X-Userscript-Update-Available") != "true" {
		t.Errorf("on a 401: %d %q", a.status, a.header.Get("X-Userscript-Update-Available"))
	}
	if a := h.api("GET", "/api/v1/me", tok, ""); a.header.Get("X-Userscript-Latest") != "" {
		t.Errorf("answered a version nobody asked for")
	}
	// Unset, the version is the served script's own.
	plain := newHarness(t)
	a := plain.api("GET", "/api/v1/me", plain.apiToken("r1", ""), "", "X-Userscript-Version", "0.0.1")
	if a.header.Get("X-Userscript-Latest") != static.UserscriptVersion() || static.UserscriptVersion() == "" {
		t.Errorf("latest %q, want the served script's %q", a.header.Get("X-Userscript-Latest"), static.UserscriptVersion())
	}
}

// Every API path, tried by Reader r1 with Reader r2's Series, token id and
// names in every parameter it could carry, reaches nothing of r2's.
func TestAPICrossReaderIsolation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seedAsura() // r1's Bookmark on nano-machine, progress 2
	h.seed([]fixture{{id: "theirs", title: "Their Work", url: "https://asurascans.com/comics/theirs", chapter: "30"}})
	mine := h.apiToken("r1", "mine")
	theirs := h.apiToken("r2", "their-secret-label")
	storetest.Insert(t, h.pool, storetest.Bookmark{Reader: "r2", Site: word.Asurascans, Series: "theirs", Progress: "7"})
	h.api("POST", "/api/v1/progress", theirs, `{"url":"https://asurascans.com/comics/theirs","chapter":8}`, "Idempotency-Key", "their-key")
	ts, _ := h.store.ListTokens(context.Background(), "r2")
	theirID := fmt.Sprint(ts[0].ID)
	theirState := func() string {
		var s string
		if err := h.pool.QueryRow(context.Background(), `SELECT coalesce(string_agg(b::text, ';' ORDER BY site, series_id), '') FROM bookmarks b WHERE reader_id = 'r2'`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := theirState()
	q := "?reader=r2&reader_id=r2&token=" + theirID + "&token_id=" + theirID
	theirSeries := "https://asurascans.com/comics/theirs"
	cases := []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/api/v1/me" + q, "", 200},
		{"GET", "/api/v1/bookmarks" + q, "", 200},
		{"GET", "/api/v1/bookmarks/export.json" + q, "", 200},
		{"GET", "/api/v1/lookup" + q + "&url=" + theirSeries, "", 200},
		{"POST", "/api/v1/progress" + q, `{"url":"` + theirSeries + `","chapter":1,"backwards":true}`, 404},
		{"POST", "/api/v1/sightings" + q, `{"url":"` + theirSeries + `","chapters":[2]}`, 200},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.method+" "+strings.Split(c.path, "?")[0]] = true
		named := []string{"X-Reader", "r2"}
		if strings.HasPrefix(c.path, "/api/v1/progress") {
			named = append(named, "Idempotency-Key", "their-key") // r2's own key
		}
		for _, hdr := range [][]string{nil, named} {
			a := h.api(c.method, c.path, mine, c.body, hdr...)
			if a.status != c.want {
				t.Errorf("%s %s %v: %d %s", c.method, c.path, hdr, a.status, a.raw)
			}
			for _, leak := range []string{"their-secret-label", `"progress":7`, `"progress":8`, `"r2"`, "Name of r2"} {
				if strings.Contains(a.raw, leak) {
					t.Errorf("%s %s answered r2's %s: %s", c.method, c.path, leak, a.raw)
				}
			}
			if a.header.Get("Idempotent-Replayed") != "" {
				t.Errorf("%s %s replayed r2's answer", c.method, c.path)
			}
		}
	}
	if theirState() != before {
		t.Fatalf("r2's Bookmarks changed: %s → %s", before, theirState())
	}
	// The table covers every API path the router serves.
	for _, rt := range routes(t, h.deps) {
		if strings.HasPrefix(rt[1], "/api/") && !covered[rt[0]+" "+rt[1]] {
			t.Errorf("the isolation table misses %s %s", rt[0], rt[1])
		}
	}
}
