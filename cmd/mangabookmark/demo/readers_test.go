package demo

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/announce"
	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/word"
)

var feedLine = regexp.MustCompile(`(?m)^demo: Ada has Discord mentions and the feed on; her private feed \(Atom\): (http://\S+\.atom)$`)

// When the script publishes chapters on Series Ada bookmarks, the Readers'
// webhook (a second path of the demo's sink) receives exactly one message
// per Series mentioning Ada and nobody else; /admin/demo/notices lists it
// beside the owner's notices; her printed feed address serves the new
// chapter's entry; the console says both; and the passes after it send
// nothing more.
func TestTheDemoMentionsAdaAndFillsHerFeedWhenHerSeriesPublish(t *testing.T) {
	t.Parallel()
	d := startDemo(t) // pace 2 s: passes come often, so "the next pass" is soon
	type watched struct{ site, id, title, before, next string }
	var series []*watched
	for _, p := range demoPublished {
		if p.site == "comix" && d.w.sidecar == nil {
			continue // not polled without the sidecar
		}
		if demoReaders[0].behind[p.file] != 0 {
			t.Fatalf("%s/%s is not a page Ada has caught up with", p.site, p.file)
		}
		w := &watched{site: p.site, id: d.seriesID(p.site, p.file)}
		d.waitFor("a first Latest Chapter for "+p.site, func() (bool, string) {
			w.before = d.scalar(`SELECT latest_chapter_num::text FROM series WHERE site = $1 AND series_id = $2`, w.site, w.id)
			return w.before != "", w.before
		})
		w.title = d.scalar(`SELECT title FROM series WHERE site = $1 AND series_id = $2`, w.site, w.id)
		series = append(series, w)
	}
	m := feedLine.FindStringSubmatch(d.stdout.String())
	if m == nil {
		t.Fatalf("no feed address for Ada on the console:\n%s", d.stdout.String())
	}
	feedURL := m[1]
	if n := len(d.readerMessages()); n != 0 {
		t.Fatalf("%d Reader announcements before anything was published (the first reads are not news): %v", n, d.readerMessages())
	}

	d.play("publish")
	for _, w := range series {
		d.waitFor("the released chapter of "+w.site, func() (bool, string) {
			w.next = d.scalar(`SELECT latest_chapter_num::text FROM series WHERE site = $1 AND series_id = $2`, w.site, w.id)
			return w.next != w.before, w.next
		})
	}
	d.waitFor("one Reader announcement per published Series", func() (bool, string) {
		return len(d.readerMessages()) >= len(series), fmt.Sprint(d.readerMessages())
	})

	for _, w := range series {
		var got []string
		for _, msg := range d.readerMessages() {
			if msg.Title == announce.EscapeMarkdown(w.title) {
				got = append(got, fmt.Sprintf("%s mentions %v", msg.Text, msg.Mentions))
			}
		}
		want := fmt.Sprintf("%s mentions [%s]", announce.ChapterWords(chapters(w.next)), demoAdaID)
		if !slices.Equal(got, []string{want}) {
			t.Errorf("%s %q: Reader announcements %q, want exactly [%q]", w.site, w.title, got, want)
		}
		d.waitFor("the console lines for "+w.site, func() (bool, string) {
			out := d.stdout.String()
			return strings.Contains(out, fmt.Sprintf("reader announcement: Ada mentioned (<@%s>): %s, Chapter %s", demoAdaID, announce.EscapeMarkdown(w.title), w.next)) &&
				strings.Contains(out, fmt.Sprintf("demo: Ada's feed now has %s %q chapter %s", w.site, w.title, w.next)), tail(out, 1500)
		})
	}

	owner := d.signIn("owner")
	page := d.page(owner, "/admin/demo/notices")
	items := page.Find(`[data-testid="demo-reader-announcements"] [data-testid="demo-announcement"]`)
	if items.Length() != len(series) {
		t.Errorf("/admin/demo/notices lists %d Reader announcements, want %d", items.Length(), len(series))
	}
	if v, _ := items.First().Attr("data-mentions"); v != demoAdaID {
		t.Errorf("the newest Reader announcement names mentions %q, want %q", v, demoAdaID)
	}
	if page.Find(`[data-testid="demo-owner-notices"] [data-testid="demo-notice"]`).Length() == 0 {
		t.Errorf("/admin/demo/notices lost the owner's notices beside the Readers'")
	}

	feed := d.get(feedURL)
	for _, w := range series {
		arrival := d.scalar(`SELECT id::text FROM chapter_arrivals WHERE site = $1 AND series_id = $2 AND chapter_num = $3::numeric`, w.site, w.id, w.next)
		if !strings.Contains(feed, ",2026:arrival/"+arrival+"<") || !strings.Contains(feed, "chapter "+w.next) {
			t.Errorf("Ada's feed has no entry for %s chapter %s (Arrival %s):\n%s", w.site, w.next, arrival, feed)
		}
	}

	// The next passes of every published Series' Site find nothing new to
	// say: the announcements are recorded as sent.
	after := d.w.clock.Now()
	for _, w := range series {
		d.waitFor("two more passes of "+w.site, func() (bool, string) {
			v := d.scalar(`SELECT count(*)::text FROM poll_passes WHERE site = $1 AND started_at > $2`, w.site, after)
			n, _ := strconv.Atoi(v)
			return n >= 2, v
		})
	}
	if n := len(d.readerMessages()); n != len(series) {
		t.Errorf("after more passes the Readers' webhook has %d messages, want still %d: %v", n, len(series), d.readerMessages())
	}
	if v := d.scalar(`SELECT count(*)::text FROM announcements WHERE reader_id = $1 AND channel = 'discord' AND sent_at IS NOT NULL`, demoAdaID); v != fmt.Sprint(len(series)) {
		t.Errorf("Ada's sent Discord announcements: %s, want %d", v, len(series))
	}
}

// readerMessages are what the sink received on the Readers' webhook.
func (d *demoRun) readerMessages() []handlers.DemoMessage {
	var out []handlers.DemoMessage
	for _, m := range d.w.sink.Messages() {
		if m.Reader {
			out = append(out, m)
		}
	}
	return out
}

// get reads an address with no session, as a feed reader does.
func (d *demoRun) get(u string) string {
	d.t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		d.t.Fatalf("GET %s: %d\n%s", u, resp.StatusCode, body)
	}
	return string(body)
}

func chapters(c string) []word.Chapter { return []word.Chapter{word.Chapter(c)} }
