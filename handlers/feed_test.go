package handlers_test

import (
	"encoding/hex"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

func hexOf(b []byte) string { return hex.EncodeToString(b) }

// atom is the shape of the feed the tests read.
type atom struct {
	XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
	Title   string   `xml:"title"`
	ID      string   `xml:"id"`
	Updated string   `xml:"updated"`
	Entries []struct {
		Title   string `xml:"title"`
		ID      string `xml:"id"`
		Updated string `xml:"updated"`
		Links   []struct {
			Href string `xml:"href,attr"`
			Rel  string `xml:"rel,attr"`
		} `xml:"link"`
	} `xml:"entry"`
}

// feedFor turns reader's feed on and answers its secret.
func (h *harness) feedFor(reader string) string {
	h.t.Helper()
	a := h.post(h.client(reader), "/settings", settingsForm("feed", "1"))
	addr := strings.TrimSpace(a.testid("feed-url").Text())
	secret := strings.TrimSuffix(strings.TrimPrefix(addr, h.srv.URL+"/feeds/"), ".atom")
	if secret == addr || secret == "" {
		h.t.Fatalf("no feed address: %d %q", a.status, addr)
	}
	return secret
}

func TestTheFeedHoldsTheReadersNewChaptersWithTheirTwoLinks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	secret := h.feedFor(readerA)
	at := func(m int) time.Time { return t0.Add(time.Duration(m-100) * time.Minute) }
	storetest.Ensure(t, h.pool, storetest.Reader{ID: readerB, Name: "B"})
	storetest.Insert(t, h.pool,
		storetest.Series{Site: word.Asurascans, ID: "solo", URL: "https://asuracomic.net/series/solo", Title: `Solo <b>&</b> "Co"`, LatestChapter: "12",
			LatestChapterURL: "https://asuracomic.net/series/solo/chapter/12"},
		storetest.Series{Site: word.Novelfull, ID: "novel", URL: "https://novelfull.com/novel.html", Title: "", LatestChapter: "4"},
		storetest.Series{Site: word.Asurascans, ID: "ended", URL: "https://asuracomic.net/series/ended", Title: "Ended", LatestChapter: "9", FinishedAt: at(1)},
		storetest.Series{Site: word.Asurascans, ID: "theirs", URL: "https://asuracomic.net/series/theirs", Title: "Theirs", LatestChapter: "3"})
	storetest.Insert(t, h.pool,
		storetest.Bookmark{Reader: readerA, Site: word.Asurascans, Series: "solo", Progress: "10"},
		storetest.Bookmark{Reader: readerA, Site: word.Novelfull, Series: "novel"},
		storetest.Bookmark{Reader: readerA, Site: word.Asurascans, Series: "ended"},
		storetest.Bookmark{Reader: readerB, Site: word.Asurascans, Series: "theirs"})
	storetest.Insert(t, h.pool,
		storetest.Arrival{Site: word.Asurascans, Series: "solo", Chapter: "10", ConfirmedAt: at(2)}, // read already
		storetest.Arrival{Site: word.Asurascans, Series: "solo", Chapter: "11", ConfirmedAt: at(3), URL: "https://asuracomic.net/series/solo/chapter/11"},
		storetest.Arrival{Site: word.Asurascans, Series: "solo", Chapter: "12", ConfirmedAt: at(5)},
		storetest.Arrival{Site: word.Novelfull, Series: "novel", Chapter: "4", ConfirmedAt: at(4)},
		storetest.Arrival{Site: word.Asurascans, Series: "ended", Chapter: "9", ConfirmedAt: at(6)},  // Finished
		storetest.Arrival{Site: word.Asurascans, Series: "theirs", Chapter: "3", ConfirmedAt: at(7)}) // not mine
	a := h.get(anonymous(), "/feeds/"+secret+".atom")
	if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "application/atom+xml") {
		t.Fatalf("the feed answered %d %q", a.status, a.header.Get("Content-Type"))
	}
	var f atom
	if err := xml.Unmarshal([]byte(a.body), &f); err != nil {
		t.Fatalf("not Atom: %v\n%s", err, a.body)
	}
	var titles []string
	for _, e := range f.Entries {
		titles = append(titles, e.Title)
	}
	want := []string{`Solo <b>&</b> "Co" — chapter 12`, "novel — chapter 4", `Solo <b>&</b> "Co" — chapter 11`}
	if strings.Join(titles, " | ") != strings.Join(want, " | ") {
		t.Fatalf("entries %q; want %q", titles, want)
	}
	if strings.Contains(a.body, "<b>") {
		t.Error("a Site's title reached the XML unescaped")
	}
	links := func(i int) (alt, rel string) {
		for _, l := range f.Entries[i].Links {
			switch l.Rel {
			case "alternate":
				alt = l.Href
			case "related":
				rel = l.Href
			}
		}
		return alt, rel
	}
	for i, w := range []struct{ chapter, bookmark string }{
		{"https://asuracomic.net/series/solo/chapter/12", "/#bm-asurascans-solo"},
		{"https://novelfull.com/novel.html", "/#bm-novelfull-novel"},
		{"https://asuracomic.net/series/solo/chapter/11", "/#bm-asurascans-solo"},
	} {
		if alt, rel := links(i); alt != w.chapter || rel != h.srv.URL+w.bookmark {
			t.Errorf("entry %d links %q and %q; want %q and %q", i, alt, rel, w.chapter, h.srv.URL+w.bookmark)
		}
	}
	if f.Entries[0].Updated != at(5).Format(time.RFC3339) || f.Updated != at(5).Format(time.RFC3339) || !strings.HasPrefix(f.Entries[0].ID, "tag:") {
		t.Errorf("entry times or id: %q %q %q", f.Entries[0].Updated, f.Updated, f.Entries[0].ID)
	}
	// The same Arrival keeps its id when the feed is read again.
	again := h.get(anonymous(), "/feeds/"+secret+".atom")
	var g atom
	if err := xml.Unmarshal([]byte(again.body), &g); err != nil || g.Entries[0].ID != f.Entries[0].ID {
		t.Errorf("ids are not stable: %v", err)
	}
}

func TestTheFeedAnswers304ToAMatchingETagOrDate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	secret := h.feedFor(readerA)
	storetest.Insert(t, h.pool, storetest.Series{Site: word.Asurascans, ID: "solo", URL: "https://asuracomic.net/series/solo", Title: "Solo", LatestChapter: "2"})
	storetest.Insert(t, h.pool, storetest.Bookmark{Reader: readerA, Site: word.Asurascans, Series: "solo", Progress: "0"})
	storetest.Insert(t, h.pool, storetest.Arrival{Site: word.Asurascans, Series: "solo", Chapter: "1", ConfirmedAt: t0.Add(-time.Hour)})
	path := "/feeds/" + secret + ".atom"
	a := h.get(anonymous(), path)
	etag, modified := a.header.Get("ETag"), a.header.Get("Last-Modified")
	if a.status != http.StatusOK || etag == "" || modified != t0.Add(-time.Hour).Format(http.TimeFormat) {
		t.Fatalf("first read: %d, ETag %q, Last-Modified %q", a.status, etag, modified)
	}
	if a := h.get(anonymous(), path, "If-None-Match", etag); a.status != http.StatusNotModified || a.body != "" {
		t.Errorf("a matching ETag: %d", a.status)
	}
	if a := h.get(anonymous(), path, "If-None-Match", `"other", W/`+etag); a.status != http.StatusNotModified {
		t.Errorf("a list holding the weak ETag: %d", a.status)
	}
	if a := h.get(anonymous(), path, "If-Modified-Since", modified); a.status != http.StatusNotModified {
		t.Errorf("a matching date: %d", a.status)
	}
	storetest.Insert(t, h.pool, storetest.Arrival{Site: word.Asurascans, Series: "solo", Chapter: "2", ConfirmedAt: t0})
	if a := h.get(anonymous(), path, "If-None-Match", etag); a.status != http.StatusOK || a.header.Get("ETag") == etag {
		t.Errorf("a new chapter behind an old ETag: %d", a.status)
	}
	if a := h.get(anonymous(), path, "If-Modified-Since", modified); a.status != http.StatusOK {
		t.Errorf("a new chapter behind an old date: %d", a.status)
	}
}

func TestAWrongRevokedOrSwitchedOffFeedIsTheOrdinary404(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	secret := h.feedFor(readerA)
	notFound := h.get(anonymous(), "/no/such/page")
	for name, path := range map[string]string{
		"a wrong secret":       "/feeds/" + strings.Repeat("A", 43) + ".atom",
		"a short secret":       "/feeds/abc.atom",
		"the secret as a page": "/feeds/" + secret,
	} {
		if a := h.get(anonymous(), path); a.status != http.StatusNotFound || a.find("main").Text() != notFound.find("main").Text() {
			t.Errorf("%s: %d %q", name, a.status, a.find("main").Text())
		}
	}
	// Turned off by the settings form (the box left out).
	h.post(h.client(readerA), "/settings", settingsForm())
	if a := h.get(anonymous(), "/feeds/"+secret+".atom"); a.status != http.StatusNotFound || a.find("main").Text() != notFound.find("main").Text() {
		t.Errorf("a feed turned off: %d", a.status)
	}
	if strings.Contains(h.logs.String(), secret) {
		t.Error("a feed secret reached the log")
	}
}

// An empty feed is dated by its address's making (migration 0038), never
// 1970: its <updated> and its Last-Modified both say when the address was
// made, and a new address carries its own time.
func TestAnEmptyFeedIsDatedByItsAddressNot1970(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	secret := h.feedFor(readerA)
	a := h.get(anonymous(), "/feeds/"+secret+".atom")
	var f atom
	if err := xml.Unmarshal([]byte(a.body), &f); err != nil || a.status != http.StatusOK {
		t.Fatalf("%d, not Atom: %v\n%s", a.status, err, a.body)
	}
	if len(f.Entries) != 0 {
		t.Fatalf("%d entries, want an empty feed", len(f.Entries))
	}
	if f.Updated != t0.Format(time.RFC3339) {
		t.Errorf("<updated> %q, want the address's making %q", f.Updated, t0.Format(time.RFC3339))
	}
	if got := a.header.Get("Last-Modified"); got != t0.Format(http.TimeFormat) {
		t.Errorf("Last-Modified %q, want %q", got, t0.Format(http.TimeFormat))
	}
	// The same copy is current: a conditional read by that date is a 304.
	if c := h.get(anonymous(), "/feeds/"+secret+".atom", "If-Modified-Since", t0.Format(http.TimeFormat)); c.status != http.StatusNotModified {
		t.Errorf("If-Modified-Since the making: %d, want 304", c.status)
	}
}
