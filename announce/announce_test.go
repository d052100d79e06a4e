package announce_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/announce"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// marker is the secret part of the test webhook's address.
const marker = "READERS-SECRET-5c1e"

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// sink is the Readers' webhook on a real loopback server.
type sink struct {
	srv   *httptest.Server
	mu    sync.Mutex
	n     int
	got   []map[string]any
	reply func(n int, w http.ResponseWriter) bool // true: accepted
}

func newSink(t *testing.T, reply func(n int, w http.ResponseWriter) bool) *sink {
	t.Helper()
	if reply == nil {
		reply = func(int, http.ResponseWriter) bool { return true }
	}
	s := &sink{reply: reply}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.n++
		n := s.n
		s.mu.Unlock()
		if !s.reply(n, w) {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Errorf("sink: %v", err)
		}
		s.mu.Lock()
		s.got = append(s.got, m)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) messages() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.got...)
}

func (s *sink) posts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *sink) url() word.Secret { return word.Secret(s.srv.URL + "/api/webhooks/1/" + marker) }

// world seeds Ada (111) and Bo (222), Discord Readers, and Cy, a local one,
// all opted in to Discord and bookmarking comix/s1 at Progress 100.
func world(t *testing.T, db storetest.DB) {
	t.Helper()
	storetest.Insert(t, db,
		storetest.Reader{ID: "111", Name: "Ada"}, storetest.Reader{ID: "222", Name: "Bo"},
		storetest.Reader{ID: "local-cy", Name: "Cy"})
	storetest.Insert(t, db, storetest.Series{Site: "comix", ID: "s1", URL: "https://comix.to/title/s1",
		Title: "Solo *Leveling*", LatestChapter: "101", CheckedAt: t0})
	storetest.Insert(t, db,
		storetest.Bookmark{Reader: "111", Site: "comix", Series: "s1", Progress: "100"},
		storetest.Bookmark{Reader: "222", Site: "comix", Series: "s1", Progress: "100"},
		storetest.Bookmark{Reader: "local-cy", Site: "comix", Series: "s1", Progress: "100"})
	storetest.Insert(t, db,
		storetest.ReaderSettings{Reader: "111", Discord: true}, storetest.ReaderSettings{Reader: "222", Discord: true},
		storetest.ReaderSettings{Reader: "local-cy", Discord: true})
}

func arrive(t *testing.T, db storetest.DB, chapter string, at time.Time) {
	t.Helper()
	storetest.Insert(t, db, storetest.Arrival{Site: "comix", Series: "s1", Chapter: chapter,
		URL: "https://comix.to/title/s1/chapter-" + chapter, ConfirmedAt: at})
}

func announcer(t *testing.T, st announce.Store, hook word.Secret, client *http.Client) *announce.Announcer {
	t.Helper()
	d, err := announce.NewDiscord(hook, client)
	if err != nil {
		t.Fatal(err)
	}
	a, err := announce.New(announce.Options{Store: st, Senders: []announce.Sender{d}, PublicBaseURL: "https://mb.example"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func pass(t *testing.T, a *announce.Announcer, at time.Time) {
	t.Helper()
	if err := a.Check(context.Background(), "comix", at); err != nil {
		t.Fatal(err)
	}
}

func TestAConfirmedArrivalMentionsEachDiscordReaderOnceAndNeverAgain(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	world(t, st.Pool())
	arrive(t, st.Pool(), "101", t0)
	s := newSink(t, nil)
	a := announcer(t, st, s.url(), nil)
	pass(t, a, t0.Add(time.Minute))
	pass(t, a, t0.Add(2*time.Minute))
	got := s.messages()
	if len(got) != 1 {
		t.Fatalf("%d messages, want exactly 1", len(got))
	}
	m := got[0]
	if m["content"] != "<@111> <@222>" {
		t.Errorf("content %q: the local Reader is not mentioned", m["content"])
	}
	am, _ := json.Marshal(m["allowed_mentions"])
	if string(am) != `{"parse":[],"users":["111","222"]}` {
		t.Errorf("allowed_mentions %s", am)
	}
	e := m["embeds"].([]any)[0].(map[string]any)
	if e["title"] != `Solo \*Leveling\*` || e["url"] != "https://comix.to/title/s1/chapter-101" {
		t.Errorf("embed title/url %q %q", e["title"], e["url"])
	}
	if e["description"] != "Chapter 101\n[Open in mangabookmark](https://mb.example/#bm-comix-s1)" {
		t.Errorf("embed description %q", e["description"])
	}
	counts, err := st.DeliveryCounts(context.Background(), t0.Add(-time.Hour), "")
	if err != nil || len(counts) != 2 || counts[0].Channel != word.ChannelDiscord || counts[0].Sent != 2 || counts[0].Failed != 0 {
		t.Fatalf("delivery counts %+v %v", counts, err)
	}
}

func TestNothingIsAnnouncedThatIsNotOwed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(t *testing.T, st *store.Store)
	}{
		{"a Sighting-only raise has no Arrival and sends nothing", func(t *testing.T, st *store.Store) {
			exec(t, st, `UPDATE series SET latest_chapter_num = 102, latest_raised_by = '111', sighted_at = now()`)
		}},
		{"a chapter at or below every Reader's Progress sends nothing", func(t *testing.T, st *store.Store) {
			exec(t, st, `UPDATE bookmarks SET progress_num = 101`)
			arrive(t, st.Pool(), "101", t0)
		}},
		{"a Finished Series sends nothing", func(t *testing.T, st *store.Store) {
			exec(t, st, `UPDATE series SET finished_at = now()`)
			arrive(t, st.Pool(), "101", t0)
		}},
		{"Readers with Discord off hear nothing", func(t *testing.T, st *store.Store) {
			exec(t, st, `UPDATE reader_settings SET discord = false`)
			arrive(t, st.Pool(), "101", t0)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := storetest.New(t)
			world(t, st.Pool())
			c.setup(t, st)
			s := newSink(t, nil)
			pass(t, announcer(t, st, s.url(), nil), t0.Add(time.Minute))
			if n := len(s.messages()); n != 0 {
				t.Fatalf("%d messages, want none", n)
			}
			var rows int
			_ = st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM announcements`).Scan(&rows)
			if rows != 0 {
				t.Fatalf("%d announcements recorded, want none", rows)
			}
		})
	}
}

func exec(t *testing.T, st *store.Store, sql string) {
	t.Helper()
	if _, err := st.Pool().Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
}

func TestTwoReplicasSendOnce(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	world(t, st.Pool())
	arrive(t, st.Pool(), "101", t0)
	s := newSink(t, nil)
	a, b := announcer(t, st, s.url(), nil), announcer(t, st, s.url(), nil)
	var wg sync.WaitGroup
	for _, x := range []*announce.Announcer{a, b, a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); pass(t, x, t0.Add(time.Minute)) }()
	}
	wg.Wait()
	if n := len(s.messages()); n != 1 {
		t.Fatalf("%d messages from two replicas, want 1", n)
	}
}

func TestChaptersOfOnePassAreCoalesced(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	world(t, st.Pool())
	for _, c := range []string{"103", "101", "102"} {
		arrive(t, st.Pool(), c, t0)
	}
	s := newSink(t, nil)
	pass(t, announcer(t, st, s.url(), nil), t0.Add(time.Minute))
	got := s.messages()
	if len(got) != 1 {
		t.Fatalf("%d messages, want 1", len(got))
	}
	e := got[0]["embeds"].([]any)[0].(map[string]any)
	if !strings.HasPrefix(e["description"].(string), "Chapters 101–103\n") || e["url"] != "https://comix.to/title/s1/chapter-103" {
		t.Fatalf("embed %v", e)
	}
}

func TestAFailedSendIsRetriedAndA429IsHonoured(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	world(t, st.Pool())
	arrive(t, st.Pool(), "101", t0)
	s := newSink(t, func(n int, w http.ResponseWriter) bool {
		switch n {
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
			return false
		case 2:
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
			return false
		}
		return true
	})
	a := announcer(t, st, s.url(), nil)
	pass(t, a, t0.Add(time.Minute)) // 500
	var attempts int
	var lastErr string
	_ = st.Pool().QueryRow(context.Background(), `SELECT max(attempts), max(last_error) FROM announcements`).Scan(&attempts, &lastErr)
	if attempts != 1 || lastErr != "Discord answered 500" || strings.Contains(lastErr, marker) {
		t.Fatalf("after a 500: attempts %d, last_error %q", attempts, lastErr)
	}
	pass(t, a, t0.Add(2*time.Minute)) // 429, an hour's wait
	pass(t, a, t0.Add(3*time.Minute)) // waits: nothing is posted
	if n := s.posts(); n != 2 || len(s.messages()) != 0 {
		t.Fatalf("%d posts (%d accepted) while the 429's wait lasts, want 2 (0)", n, len(s.messages()))
	}
	b := announcer(t, st, s.url(), nil) // another process has no wait: the retry goes
	pass(t, b, t0.Add(4*time.Minute))
	if len(s.messages()) != 1 {
		t.Fatalf("the retry after the failures: %d messages", len(s.messages()))
	}
}

func TestA404TurnsTheChannelOff(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	world(t, st.Pool())
	arrive(t, st.Pool(), "101", t0)
	s := newSink(t, func(_ int, w http.ResponseWriter) bool { w.WriteHeader(http.StatusNotFound); return false })
	d, _ := announce.NewDiscord(s.url(), nil)
	a := announcer(t, st, s.url(), nil)
	pass(t, a, t0.Add(time.Minute))
	pass(t, a, t0.Add(2*time.Minute))
	if n := s.posts(); n != 1 {
		t.Fatalf("%d posts, want 1: a dead webhook is not asked again", n)
	}
	if at, err := st.WebhookDeadAt(context.Background(), d.WebhookHash()); err != nil || at.IsZero() {
		t.Fatalf("the dead webhook is recorded: %v %v", at, err)
	}
}

func TestAHungWebhookHoldsNoConnection(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	s := newSink(t, func(int, http.ResponseWriter) bool { <-release; return false })
	defer close(release)
	pool := storetest.Pool(t, func(c *pgxpool.Config) { c.MaxConns = 1 })
	st := store.New(pool)
	world(t, pool)
	arrive(t, pool, "101", t0)
	a := announcer(t, st, s.url(), &http.Client{Timeout: 3 * time.Second})
	done := make(chan struct{})
	go func() { defer close(done); _ = a.Check(context.Background(), "comix", t0.Add(time.Minute)) }()
	for {
		if s.posts() > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := pool.Ping(ctx); err != nil {
		t.Fatalf("the one connection is held across the POST: %v", err)
	}
	<-done
	var attempts int
	_ = pool.QueryRow(context.Background(), `SELECT max(attempts) FROM announcements WHERE claimed_at IS NULL`).Scan(&attempts)
	if attempts != 1 {
		t.Fatalf("the timed-out send is recorded as a failed attempt: %d", attempts)
	}
}

func TestADigestWaitsForItsHourInTheReadersZone(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	world(t, st.Pool())
	// 09:00 in Tokyo is 00:00 UTC; t0 is 12:00 UTC (21:00 in Tokyo).
	exec(t, st, `UPDATE reader_settings SET digest = true, digest_hour = 9, zone = 'Asia/Tokyo' WHERE reader_id = '111'`)
	exec(t, st, `UPDATE reader_settings SET digest = true, digest_hour = 9, zone = 'Not/AZone' WHERE reader_id = '222'`)
	arrive(t, st.Pool(), "101", t0)
	s := newSink(t, nil)
	a := announcer(t, st, s.url(), nil)
	pass(t, a, t0.Add(time.Minute))
	pass(t, a, t0.Add(11*time.Hour))
	if n := len(s.messages()); n != 0 {
		t.Fatalf("%d messages before 09:00 in Tokyo", n)
	}
	pass(t, a, t0.Add(12*time.Hour+time.Minute)) // 09:01 in Tokyo
	got := s.messages()
	if len(got) != 1 || got[0]["content"] != "<@111>" {
		t.Fatalf("at Ada's hour: %v", got)
	}
	pass(t, a, t0.Add(21*time.Hour+time.Minute)) // 09:01 UTC: Bo's unknown zone is UTC
	if got = s.messages(); len(got) != 2 || got[1]["content"] != "<@222>" {
		t.Fatalf("at Bo's hour in UTC: %v", got)
	}
}

func TestChapterWords(t *testing.T) {
	for _, c := range []struct {
		in   []word.Chapter
		want string
	}{
		{[]word.Chapter{"101"}, "Chapter 101"},
		{[]word.Chapter{"101", "102", "103"}, "Chapters 101–103"},
		{[]word.Chapter{"101", "103"}, "Chapters 101, 103"},
		{[]word.Chapter{"10.5", "11"}, "Chapters 10.5, 11"},
	} {
		if got := announce.ChapterWords(c.in); got != c.want {
			t.Errorf("ChapterWords(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A chapter the Reader reads while its announcement waits for the digest
// is not announced: only Bo, who has not read it, hears of it.
func TestAChapterReadWhileItsDigestWaitsIsNotAnnounced(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	world(t, st.Pool())
	exec(t, st, `UPDATE reader_settings SET digest = true, digest_hour = 0, zone = 'UTC' WHERE reader_id IN ('111', '222')`)
	arrive(t, st.Pool(), "101", t0)
	s := newSink(t, nil)
	a := announcer(t, st, s.url(), nil)
	pass(t, a, t0.Add(time.Minute)) // recorded, waiting for 00:00 UTC
	exec(t, st, `UPDATE bookmarks SET progress_num = 101 WHERE reader_id = '111'`)
	pass(t, a, t0.Add(12*time.Hour+time.Minute))
	got := s.messages()
	if len(got) != 1 || got[0]["content"] != "<@222>" {
		t.Fatalf("after Ada read chapter 101: %v", got)
	}
	var left int
	if err := st.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM announcements WHERE reader_id = '111'`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("Ada's moot announcement: %d rows, %v", left, err)
	}
}

// hungSink is a Readers' webhook that reads each POST whole and never
// answers until the test ends.
func hungSink(t *testing.T) *sink {
	t.Helper()
	release := make(chan struct{})
	s := newSink(t, func(int, http.ResponseWriter) bool { <-release; return false })
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	return s
}

func TestASendThatGotNoAnswerIsNeverPostedAgain(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	world(t, st.Pool())
	arrive(t, st.Pool(), "101", t0)
	s := hungSink(t)
	client := &http.Client{Timeout: 300 * time.Millisecond}
	a, b := announcer(t, st, s.url(), client), announcer(t, st, s.url(), client)
	for i, x := range []*announce.Announcer{a, a, b, a} {
		pass(t, x, t0.Add(time.Duration(i+1)*time.Minute))
	}
	if n := s.posts(); n != 1 {
		t.Fatalf("%d POSTs reached the webhook across four passes; want 1: a request that was written may have arrived", n)
	}
	var unknown, sent int
	var lastErr string
	if err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE sent_unknown),
		count(*) FILTER (WHERE sent_at IS NOT NULL), max(last_error) FROM announcements`).Scan(&unknown, &sent, &lastErr); err != nil {
		t.Fatal(err)
	}
	if unknown != 2 || sent != 2 || strings.Contains(lastErr, marker) {
		t.Fatalf("%d rows sent-unknown, %d sent (want 2 and 2: Ada and Bo); last error %q", unknown, sent, lastErr)
	}
	counts, err := st.DeliveryCounts(context.Background(), t0, "")
	if err != nil || counts[0].Channel != word.ChannelDiscord || counts[0].Unknown != 2 || counts[0].Sent != 0 || counts[0].Failed != 0 {
		t.Fatalf("delivery counts %+v %v; want 2 that may not have arrived, apart from sent", counts, err)
	}
}

func TestASendRefusedBeforeItWasWrittenIsRetried(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	world(t, st.Pool())
	arrive(t, st.Pool(), "101", t0)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // its port now refuses the dial
	a := announcer(t, st, word.Secret(closed.URL+"/api/webhooks/1/"+marker), nil)
	pass(t, a, t0.Add(time.Minute))
	rows, err := st.UnsentAnnouncements(context.Background(), "comix", word.ChannelDiscord)
	if err != nil || len(rows) != 2 {
		t.Fatalf("after a refused dial %d rows wait to be sent (%v); want Ada's and Bo's, retried on the next pass", len(rows), err)
	}
	var unknown int
	_ = st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM announcements WHERE sent_unknown OR sent_at IS NOT NULL`).Scan(&unknown)
	if unknown != 0 {
		t.Fatalf("%d rows counted as sent after a dial that never connected", unknown)
	}
}

// A channel that fails on every pass says so once, not once a pass, until a
// minute has gone by; a message that goes through says it recovered.
func TestAChannelFailingOnEveryPassLogsOnceUntilItRecovers(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	world(t, st.Pool())
	arrive(t, st.Pool(), "101", t0)
	var mu sync.Mutex
	healthy := false
	s := newSink(t, func(_ int, w http.ResponseWriter) bool {
		mu.Lock()
		defer mu.Unlock()
		if !healthy {
			w.WriteHeader(http.StatusInternalServerError)
		}
		return healthy
	})
	var logs strings.Builder
	var logMu sync.Mutex
	d, _ := announce.NewDiscord(s.url(), nil)
	clock := t0
	a, err := announce.New(announce.Options{Store: st, Senders: []announce.Sender{d},
		Logger: slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			logMu.Lock()
			defer logMu.Unlock()
			return logs.Write(p)
		}), nil)),
		Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		clock = t0.Add(time.Duration(i) * 10 * time.Second)
		pass(t, a, clock)
	}
	count := func(s string) int { logMu.Lock(); defer logMu.Unlock(); return strings.Count(logs.String(), s) }
	if n := count("not sent to every Reader"); n != 1 || s.posts() != 5 {
		t.Fatalf("%d lines for 5 failed passes (%d posts), want 1", n, s.posts())
	}
	mu.Lock()
	healthy = true
	mu.Unlock()
	clock = t0.Add(time.Minute)
	pass(t, a, clock)
	if n := count("not sent to every Reader; retrying on a later pass: recovered"); n != 1 || len(s.messages()) != 1 {
		t.Fatalf("%d recovery lines, %d messages; want 1 and 1", n, len(s.messages()))
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
