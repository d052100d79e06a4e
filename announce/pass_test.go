package announce_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/announce"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// The whole path (CONTEXT.md, Announcement): a real Poller pass
// confirms a chapter, its Notifier is the Announcer's Hook, and the
// chapter reaches a loopback Discord sink, a loopback push service and the
// Reader's feed, once.

const (
	passSite   = "novelfull"
	passSeries = "s1"
	passURL    = "https://novelfull.com/s1.html"
)

// pageReader is a poller.Reader whose page says the chapter it is told
// (or refuses, when told word.Refused).
type pageReader struct {
	mu     sync.Mutex
	result adapters.Result
}

func (r *pageReader) reads(chapter string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.result = adapters.Result{Outcome: word.OK, Checked: true, Status: 200, Facts: adapters.Facts{
		Title: "A Title", Kind: word.Novel, LatestChapter: chapter, HasLatest: true,
		LatestChapterURL: "https://novelfull.com/s1/ch-" + chapter + ".html"}}
}

func (r *pageReader) refuses() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.result = adapters.Result{Outcome: word.Refused, Checked: true, Status: 429}
}

func (r *pageReader) Read(context.Context, string, string) adapters.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.result
}

func (r *pageReader) Route(string) word.Route { return word.RoutePlain }
func (r *pageReader) HasBrowser() bool        { return false }

// fakeClock is the pass's clock: the test moves it, nothing sleeps.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// passWorld is one test's Reader "111" (Discord id 111) who bookmarks
// novelfull/s1 at Progress 9 with Discord, push and the feed on, one
// browser subscribed at a loopback push service, and a Poller whose
// Notifier is the Announcer's Hook.
type passWorld struct {
	t    *testing.T
	st   *store.Store
	clk  *fakeClock
	rd   *pageReader
	p    *poller.Poller
	sink *sink
	svc  *pushService
	br   browser
}

func newPassWorld(t *testing.T) *passWorld {
	t.Helper()
	ctx := context.Background()
	pool := storetest.Pool(t, nil)
	w := &passWorld{t: t, st: store.New(pool), clk: &fakeClock{t: t0}, rd: &pageReader{},
		sink: newSink(t, nil), svc: newPushService(t), br: newBrowser(t)}
	storetest.Insert(t, pool, storetest.Reader{ID: "111", Name: "Ada"}, storetest.Reader{ID: "222", Name: "Bo"})
	if err := w.st.CreateSeries(ctx, store.Series{Site: passSite, SeriesID: passSeries, URL: passURL,
		Title: "A Title", Kind: "novel"}, t0.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	storetest.Insert(t, pool, storetest.Bookmark{Reader: "111", Site: passSite, Series: passSeries, Progress: "9"})
	storetest.Insert(t, pool, storetest.ReaderSettings{Reader: "111", Discord: true, Push: true, Feed: true})
	save(t, w.st, w.br.subscription("111", w.svc.endpoint("/push/ada")))

	d, err := announce.NewDiscord(w.sink.url(), nil)
	if err != nil {
		t.Fatal(err)
	}
	priv, pub, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	push, err := announce.NewPush(announce.PushOptions{Store: w.st, Subject: "https://mb.example", Loopback: true,
		Keys: announce.VAPIDKeys{Public: pub, Private: word.Secret(priv)}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a, err := announce.New(announce.Options{Store: w.st, Senders: []announce.Sender{d, push},
		PublicBaseURL: "https://mb.example", Now: w.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	w.p = poller.New(w.st, w.rd, poller.Config{Now: w.clk.Now, Logger: slog.New(slog.DiscardHandler),
		Sites: []string{passSite}, Notifier: announce.Chain(a.Hook())})
	t.Cleanup(w.p.Close)
	return w
}

// pass makes the Series due (a Forced Poll) and runs one pass of its Lane,
// which must read it.
func (w *passWorld) pass() {
	w.t.Helper()
	w.clk.advance(time.Minute)
	if err := w.st.ForceSeriesPoll(context.Background(), passSite, passSeries, w.clk.Now()); err != nil {
		w.t.Fatal(err)
	}
	w.clk.advance(time.Minute)
	if p := w.p.RunPass(context.Background(), passSite); p.Checked != 1 {
		w.t.Fatalf("the pass checked %d Series, want the one: %+v", p.Checked, p)
	}
}

// sent is how many Discord posts and pushes have gone, and the Reader's
// feed entries now.
func (w *passWorld) sent() (discord, pushes int, feed []store.FeedEntry) {
	w.t.Helper()
	w.svc.mu.Lock()
	pushes = w.svc.posts
	w.svc.mu.Unlock()
	feed, err := w.st.FeedEntries(context.Background(), "111")
	if err != nil {
		w.t.Fatal(err)
	}
	return w.sink.posts(), pushes, feed
}

func (w *passWorld) want(discord, pushes int, feed ...string) {
	w.t.Helper()
	d, p, f := w.sent()
	var chapters []string
	for _, e := range f {
		chapters = append(chapters, e.Chapter)
	}
	if d != discord || p != pushes || len(chapters) != len(feed) {
		w.t.Fatalf("%d Discord messages, %d pushes, feed %v; want %d, %d, %v", d, p, chapters, discord, pushes, feed)
	}
	for i := range feed {
		if chapters[i] != feed[i] {
			w.t.Fatalf("feed %v, want %v", chapters, feed)
		}
	}
}

// pushed decrypts the one push the service got with the browser's keys.
func (w *passWorld) pushed() announce.PushPayload {
	w.t.Helper()
	w.svc.mu.Lock()
	body := w.svc.bodies["/push/ada"]
	w.svc.mu.Unlock()
	var got announce.PushPayload
	if err := json.Unmarshal(w.br.decrypt(w.t, body), &got); err != nil {
		w.t.Fatal(err)
	}
	return got
}

func TestAPollThatConfirmsAChapterAnnouncesItOnceOnEveryChannel(t *testing.T) {
	t.Parallel()
	w := newPassWorld(t)
	w.rd.reads("10")
	w.pass()
	// The Series' first read fills it in: it is not news, though Ada, at 9,
	// is behind it and would be told of an Arrival of 10.
	w.want(0, 0)

	w.rd.reads("11")
	w.pass()
	w.want(1, 1, "11")
	m := w.sink.messages()[0]
	if m["content"] != "<@111>" {
		t.Errorf("content %q", m["content"])
	}
	if am, _ := json.Marshal(m["allowed_mentions"]); string(am) != `{"parse":[],"users":["111"]}` {
		t.Errorf("allowed_mentions %s", am)
	}
	e := m["embeds"].([]any)[0].(map[string]any)
	if e["title"] != "A Title" || e["url"] != "https://novelfull.com/s1/ch-11.html" ||
		e["description"] != "Chapter 11\n[Open in mangabookmark](https://mb.example/#bm-novelfull-s1)" {
		t.Errorf("embed %v", e)
	}
	got := w.pushed()
	if got.Title != "A Title" || got.Body != "Chapter 11" || got.URL != "https://novelfull.com/s1/ch-11.html" ||
		got.Bookmark != "https://mb.example/#bm-novelfull-s1" {
		t.Errorf("push payload %+v", got)
	}
	_, _, feed := w.sent()
	if feed[0].ChapterURL != "https://novelfull.com/s1/ch-11.html" || feed[0].Title != "A Title" {
		t.Errorf("feed entry %+v", feed[0])
	}

	w.pass() // the page still says 11
	w.want(1, 1, "11")
}

func TestASightingOnlyNumberIsAnnouncedOnlyOnceAPollConfirmsIt(t *testing.T) {
	t.Parallel()
	w := newPassWorld(t)
	w.rd.reads("10")
	w.pass()
	// Bo saw chapter 11; Ada, at 9, has not read it.
	raised, err := w.st.RaiseLatest(context.Background(), passSite, passSeries, "11",
		"https://novelfull.com/s1/ch-11.html", "222", w.clk.Now())
	if err != nil || !raised {
		t.Fatalf("RaiseLatest = %v, %v", raised, err)
	}
	w.rd.refuses()
	w.pass()
	w.want(0, 0)

	w.rd.reads("11")
	w.pass()
	w.want(1, 1, "11")
	if got := w.pushed(); got.Body != "Chapter 11" {
		t.Errorf("push payload %+v", got)
	}
	w.pass()
	w.want(1, 1, "11")
}
