package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/fetch/chromiumtest"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// The newcomer's path as one end-to-end test: `make run` on a machine with
// no internet, ten addresses pasted into the Reader's add box, /admin,
// /admin/lanes, a Series page and / read in Chromium, a restart, and the
// same pages read again. Every state sentence is checked against what the
// database holds, before and after the restart, and each age against the
// first recorded occurrence it names (CONTEXT.md, Lane state; docs/adr/0022).

// newcomerPaste is what the newcomer pastes: Series and chapter addresses
// of three plain Sites. demonicscans gets none, so only its listing ever
// asks that Site anything.
var newcomerPaste = []string{
	"https://asurascans.com/comics/nano-machine-7f873ca6",
	"https://asurascans.com/comics/solo-max-level-newbie-5fa3b2c1",
	"https://asurascans.com/comics/omniscient-reader-0a1b2c3d",
	"https://asurascans.com/comics/the-greatest-estate-developer-1234abcd/chapter/3",
	"https://novelfull.com/reverend-insanity.html",
	"https://novelfull.com/battle-through-the-heavens.html",
	"https://novelfull.com/lord-of-the-mysteries.html",
	"https://lightnovelworld.org/novel/shadow-slave/",
	"https://lightnovelworld.org/novel/super-gene/chapter/012/",
	"https://lightnovelworld.org/novel/the-beginning-after-the-end/",
}

// The Series page the test reads: the first address's.
const newcomerSeries = "/admin/series/asurascans/nano-machine"

// offlinePlain are the Lanes read over plain HTTPS under BROWSER_SITES'
// default; offlineBrowser those read through a sidecar the newcomer has not
// set up.
var (
	offlinePlain   = []word.Site{word.Asurascans, word.Demonicscans, word.Novelfull, word.Lightnovelworld}
	offlineBrowser = []word.Site{word.Comix, word.Kagane}
)

// offlineEnv is `make run` on a machine with no internet: every plain Site
// at a loopback port nothing listens on, so each request is refused before
// an answer, which is unreachable as a failed DNS lookup is (docs/adr/0022).
// The spacing is short so the test's passes take seconds.
func offlineEnv(t *testing.T) map[string]string {
	var bases []string
	for _, s := range offlinePlain {
		bases = append(bases, string(s)+"=http://127.0.0.1:1")
	}
	return map[string]string{
		"DATABASE_URL":   storetest.URL(t),
		"DATA_DIR":       t.TempDir(),
		"LISTEN_ADDR":    freeAddr(t),
		"SITE_BASE_URLS": strings.Join(bases, ","),
		"POLL_SPACING":   "100ms",
	}
}

// serveEnv runs `serve` with env until stop (or the test's end).
func serveEnv(t *testing.T, env map[string]string) *aServe {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &aServe{base: "http://" + env["LISTEN_ADDR"], cancel: cancel, done: make(chan error, 1), stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		s.done <- Run(ctx, func(k string) string { return env[k] }, s.stdout, s.stderr)
	}()
	t.Cleanup(func() { cancel(); <-ended })
	waitHealthy(t, s.base, s.done)
	return s
}

var signInLine = regexp.MustCompile(`Owner sign-in link[^\n]*\n\s+(\S+)`)

// signInLink is the link the console prints for the owner.
func (s *aServe) signInLink(t *testing.T) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := signInLine.FindStringSubmatch(s.stdout.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("no sign-in link on the console:\n%s", s.stdout.String())
	return ""
}

// TestTheNewcomersOfflinePathSaysWhatTheDatabaseHoldsBeforeAndAfterARestart:
// the whole server (Run, its Lanes running) offline, the owner signed in by
// the console's link, ten addresses pasted on /, the Lanes' passes awaited
// in the pass log, then the four pages read and checked; the server
// stopped and a new one started on the same database, and the pages read
// and checked again, each age no younger than before. Screenshots at 1280
// and 390 px, light before and after, dark after, in
// artifacts/screenshots/newcomer/.
func TestTheNewcomersOfflinePathSaysWhatTheDatabaseHoldsBeforeAndAfterARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	browserURL := chromiumtest.Start(t, "--hide-scrollbars", "--window-size=1280,900").WSURL
	env := offlineEnv(t)
	pool, err := pgxpool.New(context.Background(), env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	first := serveEnv(t, env)
	b := openNewcomerTab(t, browserURL, first.base)
	b.signIn(first.signInLink(t))
	b.paste(newcomerPaste)
	waitFor(t, first, "every pasted Series' Poll in the pass log", func() (bool, error) { return pastePolled(pool) })

	before := b.readAndCheck(pool, "before")
	first.stop(t)
	restartAt := time.Now()
	second := serveEnv(t, env) // nothing carried over but the database and DATA_DIR
	waitFor(t, second, "a pass of every Lane after the restart", func() (bool, error) { return passedSince(pool, restartAt) })
	after := b.readAndCheck(pool, "after")
	for key, was := range before.ages {
		if now, ok := after.ages[key]; !ok || now < was {
			t.Errorf("after the restart %s reads %v, before it %v: the age started again", key, now, was)
		}
	}
	b.darkShots()
	second.stop(t)
	if t.Failed() {
		t.Logf("the second server's log:\n%s", second.stderr.String())
	}
}

// waitFor polls the database until done says so, generously (a loaded
// 2-core machine), failing with the server's log.
func waitFor(t *testing.T, s *aServe, what string, done func() (bool, error)) {
	t.Helper()
	for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		ok, err := done()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
	}
	t.Fatalf("waited for %s in vain; the log:\n%s", what, s.stderr.String())
}

// pastePolled: every pasted Series was Polled, its Forced Poll served, and
// the passes that Polled them are in the pass log (a pass row is written
// when its pass ends).
func pastePolled(pool *pgxpool.Pool) (bool, error) {
	var series, waiting, polls int
	err := pool.QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM series),
		       (SELECT count(*) FROM series WHERE checked_at IS NULL OR force_poll_at > checked_at),
		       (SELECT coalesce(sum(ok + no_chapter + unfetchable + not_found + errors + refused + unreachable), 0) FROM poll_passes)`).
		Scan(&series, &waiting, &polls)
	return series == len(newcomerPaste) && waiting == 0 && polls >= series, err
}

// passedSince: every Lane has logged a pass begun after at, and each plain
// Lane's has read its listing (a Lane reads it at its first pass).
func passedSince(pool *pgxpool.Pool, at time.Time) (bool, error) {
	var lanes, listed int
	err := pool.QueryRow(context.Background(), `
		SELECT count(DISTINCT site), count(DISTINCT site) FILTER (WHERE listing_pages > 0)
		  FROM poll_passes WHERE started_at >= $1`, at).Scan(&lanes, &listed)
	return lanes == len(word.Sites) && listed == len(offlinePlain), err
}

// newcomerBrowser is the newcomer's tab on the server at base.
type newcomerBrowser struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots string
}

func openNewcomerTab(t *testing.T, wsURL, base string) *newcomerBrowser {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	alloc, cancelAlloc := remote.NewAllocator(ctx, wsURL)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	shots := filepath.Join("..", "artifacts", "screenshots", "newcomer")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	return &newcomerBrowser{t: t, ctx: tab, base: base, shots: shots}
}

func (b *newcomerBrowser) step(what string, err error) {
	b.t.Helper()
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *newcomerBrowser) signIn(link string) {
	b.t.Helper()
	b.step("open the sign-in link", chromedp.Do(b.ctx, chromedp.Navigate(link)))
	_, err := chromedp.RunResponse(b.ctx, chromedp.Click(chromedp.CSS(`[data-testid="link-login"]`)))
	b.step("sign in", err)
}

// paste adds the addresses through the Reader's add box on /, and waits
// for its answer: one line per address, each added.
func (b *newcomerBrowser) paste(lines []string) {
	b.t.Helper()
	b.step("the add box", chromedp.Do(b.ctx, chromedp.Navigate(b.base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="add-urls"]`)),
		chromedp.SetValue(chromedp.CSS(`[data-testid="add-urls"]`), strings.Join(lines, "\n")),
		chromedp.Click(chromedp.CSS(`[data-testid="add-submit"]`))))
	_, err := chromedp.Run(b.ctx, chromedp.Poll[bool](fmt.Sprintf(
		`document.querySelectorAll('[data-testid="add-result"][data-result="added"]').length === %d`, len(lines)),
		chromedp.WithPollingTimeout(45*time.Second)))
	b.step("every address added", err)
}

// newcomerPages are the pages the newcomer reads, by the name their
// screenshots carry.
var newcomerPages = []struct{ name, path string }{
	{"admin", "/admin"}, {"lanes", "/admin/lanes"}, {"series", newcomerSeries}, {"home", "/"},
}

// page is one page as Chromium rendered it, and the moments before it was
// asked for and after it was read: the clock any age on it was read on
// lies between.
type page struct {
	doc      *goquery.Document
	from, to time.Time
}

// reading is what one reading of the pages found: every age, by what it
// is the age of, for the comparison across the restart.
type reading struct{ ages map[string]time.Duration }

// readAndCheck reads the four pages at 1280 px and checks each state
// sentence against the database, then screenshots them at 1280 and 390
// px. A pass logged while the pages were read makes it read again, so the
// pages and the facts are of one moment.
func (b *newcomerBrowser) readAndCheck(pool *pgxpool.Pool, phase string) reading {
	b.t.Helper()
	var pages map[string]page
	var f dbFacts
	for try := 0; ; try++ {
		f = readFacts(b.t, pool)
		pages = b.readPages()
		again := readFacts(b.t, pool)
		if again.newest == f.newest || try == 4 {
			f = again
			break
		}
	}
	r := reading{ages: map[string]time.Duration{}}
	c := checker{t: b.t, phase: phase, facts: f, r: r}
	c.landing(pages["admin"])
	c.lanes(pages["lanes"])
	c.series(pages["series"])
	c.home(pages["home"])
	for _, w := range []int64{1280, 390} {
		b.screenshot(phase+"-light", w)
	}
	return r
}

func (b *newcomerBrowser) readPages() map[string]page {
	b.t.Helper()
	b.step("desktop", chromedp.Do(b.ctx, chromedp.EmulateViewport(1280, 900)))
	out := map[string]page{}
	for _, p := range newcomerPages {
		from := time.Now()
		b.step(p.name, chromedp.Do(b.ctx, chromedp.Navigate(b.base+p.path), chromedp.WaitReady(chromedp.CSS(`main`))))
		html, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
		b.step("read "+p.name, err)
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
		b.step("parse "+p.name, err)
		out[p.name] = page{doc: doc, from: from, to: time.Now()}
	}
	return out
}

// screenshot saves each page at width w into artifacts/screenshots/newcomer/.
func (b *newcomerBrowser) screenshot(prefix string, w int64) {
	b.t.Helper()
	b.step("viewport", chromedp.Do(b.ctx, chromedp.EmulateViewport(w, 900)))
	for _, p := range newcomerPages {
		b.step(p.name, chromedp.Do(b.ctx, chromedp.Navigate(b.base+p.path), chromedp.WaitReady(chromedp.CSS(`main`))))
		buf, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100)) // quality 100 = PNG
		b.step("screenshot "+p.name, err)
		b.step("save "+p.name, os.WriteFile(filepath.Join(b.shots, fmt.Sprintf("%s-%s-%d.png", prefix, p.name, w)), buf, 0o644))
	}
}

// darkShots are the same pages in the dark scheme, once.
func (b *newcomerBrowser) darkShots() {
	b.t.Helper()
	_, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
	b.step("dark scheme", err)
	for _, w := range []int64{1280, 390} {
		b.screenshot("after-dark", w)
	}
}

// laneFacts is what the pass log holds of one Lane.
type laneFacts struct {
	// firstAsked is the first pass that asked the Site anything, a Poll or
	// a listing page; answered counts the passes the Site answered.
	firstAsked span
	answered   int
	// firstListing is the pass of the first listing attempt;
	// listingAnswered counts those the Site answered.
	firstListing    span
	listingAnswered int
	// counts are the outcomes of the Lanes page's window (ownerWindow).
	counts map[word.Outcome]int64
	// The newest pass.
	due, polled, checked int64
	skip                 string
}

// span is when one pass ran: a request it made, and the moment recorded
// of it, fall between its start and its end. nil: no such pass.
type span *[2]time.Time

// seriesFacts is one Series as its row holds it.
type seriesFacts struct {
	site, id                     string
	noChapter, finished, done    bool
	failing, checked, forceWaits bool
	failure                      string
	unreached                    bool // the pass that held its last Poll reached nothing
	bookmarks                    int
	progress                     string // the Bookmark's Progress, "" for none
}

// dbFacts is the database at one moment: newest is the newest pass row.
type dbFacts struct {
	lanes  map[string]laneFacts
	series map[string]seriesFacts
	newest int64
}

// The outcome columns, as sums and as the sum of those the Site answered
// (store.unreachedPass: unfetchable asks nothing of the Site).
func outcomeSums(alias string) string {
	var cols []string
	for _, o := range word.Outcomes {
		cols = append(cols, "coalesce(sum("+o.Column(alias)+"), 0)")
	}
	return strings.Join(cols, ", ")
}

const (
	answeredPass = `(p.ok + p.no_chapter + p.not_found + p.errors + p.refused > 0 OR p.listing_outcome NOT IN ('', 'unreachable'))`
	askedPass    = `p.skip = '' AND (p.ok + p.no_chapter + p.unfetchable + p.not_found + p.errors + p.refused + p.unreachable > 0 OR p.listing_pages > 0)`
)

func readFacts(t *testing.T, pool *pgxpool.Pool) dbFacts {
	t.Helper()
	ctx := context.Background()
	f := dbFacts{lanes: map[string]laneFacts{}, series: map[string]seriesFacts{}}
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM poll_passes`).Scan(&f.newest); err != nil {
		t.Fatal(err)
	}
	for _, site := range word.SiteNames() {
		l := laneFacts{counts: map[word.Outcome]int64{}}
		sums := make([]int64, len(word.Outcomes))
		var asked, listed []time.Time
		dst := []any{&asked, &l.answered, &listed, &l.listingAnswered}
		for i := range sums {
			dst = append(dst, &sums[i])
		}
		err := pool.QueryRow(ctx, `
			SELECT (array_agg(ARRAY[p.started_at, p.finished_at] ORDER BY p.started_at) FILTER (WHERE `+askedPass+`))[1:1],
			       count(*) FILTER (WHERE `+askedPass+` AND `+answeredPass+`),
			       (array_agg(ARRAY[p.started_at, p.finished_at] ORDER BY p.started_at) FILTER (WHERE p.listing_pages > 0))[1:1],
			       count(*) FILTER (WHERE p.listing_pages > 0 AND p.listing_outcome <> 'unreachable'),
			       `+outcomeSums("p")+`
			  FROM poll_passes p WHERE p.site = $1`, site).Scan(dst...)
		if err != nil {
			t.Fatalf("the pass log of %s: %v", site, err)
		}
		for i, o := range word.Outcomes {
			l.counts[o] = sums[i]
		}
		l.firstAsked, l.firstListing = spanOf(asked), spanOf(listed)
		err = pool.QueryRow(ctx, `
			SELECT p.due, p.ok + p.no_chapter + p.unfetchable + p.not_found + p.errors + p.refused + p.unreachable, p.checked, p.skip
			  FROM poll_passes p WHERE p.site = $1 ORDER BY p.started_at DESC LIMIT 1`, site).Scan(&l.due, &l.polled, &l.checked, &l.skip)
		if err != nil {
			t.Fatalf("the newest pass of %s: %v", site, err)
		}
		f.lanes[site] = l
	}
	readSeriesFacts(t, pool, &f)
	return f
}

func spanOf(v []time.Time) span {
	if len(v) != 2 {
		return nil
	}
	return &[2]time.Time{v[0], v[1]}
}

func readSeriesFacts(t *testing.T, pool *pgxpool.Pool, f *dbFacts) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT s.site, s.series_id, s.latest_chapter_num IS NULL, s.finished_at IS NOT NULL, s.site_completed_at IS NOT NULL,
		       s.latest_chapter_num IS NOT NULL AND s.failing_since < now() - interval '12 hours',
		       s.checked_at IS NOT NULL, s.force_poll_at IS NOT NULL AND (s.checked_at IS NULL OR s.force_poll_at > s.checked_at),
		       coalesce(fl.outcome, ''),
		       coalesce((SELECT p.skip = '' AND p.unreachable > 0 AND NOT `+answeredPass+` AND p.finished_at >= s.checked_at
		                   FROM poll_passes p WHERE p.site = s.site AND p.started_at <= s.checked_at
		                  ORDER BY p.started_at DESC LIMIT 1), false),
		       (SELECT count(*) FROM bookmarks b WHERE b.site = s.site AND b.series_id = s.series_id),
		       coalesce((SELECT max(b.progress_num)::text FROM bookmarks b WHERE b.site = s.site AND b.series_id = s.series_id), '')
		  FROM series s LEFT JOIN poll_failures fl ON fl.site = s.site AND fl.series_id = s.series_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s seriesFacts
		if err := rows.Scan(&s.site, &s.id, &s.noChapter, &s.finished, &s.done, &s.failing, &s.checked, &s.forceWaits,
			&s.failure, &s.unreached, &s.bookmarks, &s.progress); err != nil {
			t.Fatal(err)
		}
		f.series[s.site+"/"+s.id] = s
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// checker checks one reading's pages against one moment's facts.
type checker struct {
	t     *testing.T
	phase string
	facts dbFacts
	r     reading
}

func (c checker) errorf(format string, args ...any) {
	c.t.Helper()
	c.t.Errorf(c.phase+" the restart: "+format, args...)
}

// offline is a plain Lane's facts, which must say the test is what it
// says: asked, and never answered.
func (c checker) offline(site word.Site) laneFacts {
	c.t.Helper()
	l := c.facts.lanes[string(site)]
	if l.firstAsked == nil || l.firstListing == nil || l.answered > 0 || l.listingAnswered > 0 {
		c.t.Fatalf("%s the restart: %s's pass log is not a Site never reached: %+v", c.phase, site, l)
	}
	return l
}

// landing: /admin's verdict names our network for every plain Lane, the
// one without Series included (its listing asked), with the age of the
// first pass that asked its Site anything; and it names no Series failing,
// as no failure row exists.
func (c checker) landing(p page) {
	c.t.Helper()
	verdict := squash(p.doc.Find(`[data-testid="verdict"]`).Text())
	for _, site := range offlinePlain {
		l := c.offline(site)
		re := regexp.MustCompile(`the ` + string(site) + ` Lane unable to reach ` + regexp.QuoteMeta(hostOf(site)) + ` for (\d+ [a-z]+)`)
		m := re.FindStringSubmatch(verdict)
		if m == nil {
			c.errorf("/admin's verdict does not name our network for %s, whose every request reached nothing since %s:\n%s",
				site, l.firstAsked[0].Format(time.TimeOnly), verdict)
			continue
		}
		c.age("/admin: "+string(site)+" unable to reach", m[1], l.firstAsked, p)
	}
	if n := p.doc.Find(`[data-testid="verdict"] a[href*="filter=failing"]`).Length(); n > 0 && !c.anyFailing() {
		c.errorf("/admin's verdict links failing Series, and the database holds none:\n%s", verdict)
	}
	c.stats(p)
	if strings.Contains(verdict, "Healthy") || strings.Contains(verdict, "All is well") {
		c.errorf("/admin calls a server that reached nothing healthy:\n%s", verdict)
	}
}

// stats: /admin's counts of every Series, the failing and the Finished
// are the database's.
func (c checker) stats(p page) {
	c.t.Helper()
	var failing, finished int
	for _, s := range c.facts.series {
		if s.failing {
			failing++
		}
		if s.finished {
			finished++
		}
	}
	for id, want := range map[string]int{"stat-all": len(c.facts.series), "stat-failing": failing, "stat-finished": finished} {
		if got := squash(p.doc.Find(`[data-testid="stats"] [data-testid="` + id + `"]`).Text()); got != strconv.Itoa(want) {
			c.errorf("/admin's %s reads %q, the database %d", id, got, want)
		}
	}
}

func (c checker) anyFailing() bool {
	for _, s := range c.facts.series {
		if s.failure != "" || s.failing {
			return true
		}
	}
	return false
}

// lanes: each Lane's counts and last pass are its pass log's; a plain
// Lane says it cannot reach its Site since its first request, and its
// listing's last attempt with the age of the first that failed; a browser
// Lane with no sidecar is not said to run.
func (c checker) lanes(p page) {
	c.t.Helper()
	for _, s := range word.Sites {
		site := string(s)
		row := p.doc.Find(`[data-testid="lane-row"][data-site="` + site + `"]`)
		l := c.facts.lanes[site]
		for _, o := range word.Outcomes {
			got := squash(row.Find(`[data-testid="lane-counts"] [data-outcome="` + string(o) + `"] dd`).Text())
			if got != strconv.FormatInt(l.counts[o], 10) {
				c.errorf("the %s Lane counts %s %q, its pass log %d", site, o, got, l.counts[o])
			}
		}
		last := squash(row.Find(`[data-testid="lane-last-pass"]`).Text())
		want := fmt.Sprintf(": %d due, %d polled, %d answered", l.due, l.polled, l.checked)
		if l.skip != "" {
			want = ": skipped (" + l.skip + ")"
		}
		if !strings.HasPrefix(last, "Last pass: ") || !strings.HasSuffix(last, want) {
			c.errorf("the %s Lane's last pass reads %q, its newest row says %q", site, last, want)
		}
		state := row.Find(`[data-testid="lane-state"]`)
		switch {
		case slices.Contains(offlineBrowser, s):
			if l.skip != string(word.SkipNoBrowser) || !state.HasClass("fault") {
				c.errorf("the %s Lane, whose newest pass skipped %q, reads %q", site, l.skip, squash(state.Text()))
			}
		default:
			c.plainLane(p, s, row)
		}
	}
}

func (c checker) plainLane(p page, site word.Site, row *goquery.Selection) {
	c.t.Helper()
	l := c.offline(site)
	state := squash(row.Find(`[data-testid="lane-state"]`).Text())
	note := squash(row.Find(`[data-testid="lane-state-note"]`).Text())
	if !strings.Contains(state, "cannot reach") || !strings.Contains(note, hostOf(site)) {
		c.errorf("the %s Lane, which reached nothing since %s, reads %q: %q", site, l.firstAsked[0].Format(time.TimeOnly), state, note)
	} else if m := ageIn.FindStringSubmatch(note); m == nil {
		c.errorf("the %s Lane's note gives no age: %q", site, note)
	} else {
		c.age("/admin/lanes: "+string(site)+" not reached", m[1], l.firstAsked, p)
	}
	listing := squash(row.Find(`[data-testid="lane-listing"]`).Text())
	m := regexp.MustCompile(`not reached for ` + ageIn.String()).FindStringSubmatch(listing)
	if m == nil {
		c.errorf("the %s Lane's listing, every attempt unreachable since %s, reads %q", site, l.firstListing[0].Format(time.TimeOnly), listing)
		return
	}
	c.age("/admin/lanes: "+string(site)+" listing not reached", m[1], l.firstListing, p)
}

// series: the Series page's last outcome is its failure row's, else
// unreachable when the pass holding its last Poll reached nothing, else a
// read; a Forced Poll is said to wait only while one does; its Bookmarks
// are its rows.
func (c checker) series(p page) {
	c.t.Helper()
	s := c.facts.series["asurascans/nano-machine"]
	want := ""
	switch {
	case s.failure != "":
		want = s.failure
	case s.unreached:
		want = string(word.Unreachable)
	case s.checked:
		want = string(word.OK)
	}
	note := p.doc.Find(`[data-testid="outcome-note"]`)
	if got := note.AttrOr("data-outcome", ""); got != want {
		c.errorf("the Series page's last outcome is %q, the database's %q (%+v)", got, want, s)
	} else if want != "" && !strings.Contains(squash(note.Find("h2").Text()), "Last outcome: "+word.Outcome(want).PlainOn(word.RoutePlain)) {
		c.errorf("the Series page's outcome heading reads %q", squash(note.Find("h2").Text()))
	}
	if pending := p.doc.Find(`[data-testid="force-pending"]`).Length() > 0; pending != s.forceWaits {
		c.errorf("the Series page says a Forced Poll waits: %v; the database: %v", pending, s.forceWaits)
	}
	if n := p.doc.Find(`[data-testid="bookmarks"] [data-testid="bookmark"]`).Length(); n != s.bookmarks {
		c.errorf("the Series page lists %d Bookmarks, the database %d", n, s.bookmarks)
	}
}

// home: one row per Bookmark, each saying what its Series' row holds: its
// Progress, no chapter known while none is, and a health mark only for a Series that
// is failing, Finished or completed on its Site.
func (c checker) home(p page) {
	c.t.Helper()
	rows := p.doc.Find(`[data-testid="bookmark-list"] [data-testid="bookmark"]`)
	if rows.Length() != len(c.facts.series) {
		c.errorf("/ shows %d Bookmarks, the database holds %d Series bookmarked", rows.Length(), len(c.facts.series))
	}
	rows.Each(func(_ int, row *goquery.Selection) {
		key := row.AttrOr("data-site", "") + "/" + row.AttrOr("data-series-id", "")
		s, ok := c.facts.series[key]
		if !ok || s.bookmarks != 1 {
			c.errorf("/ shows %s, which the database does not bookmark once", key)
			return
		}
		progress, wantProgress := squash(row.Find(`[data-testid="progress"]`).Text()), "not started"
		if s.progress != "" {
			wantProgress = "you " + s.progress
		}
		if progress != wantProgress {
			c.errorf("/ says %q of %s; its Bookmark's Progress is %q", progress, key, s.progress)
		}
		latest := squash(row.Find(`[data-testid="latest"]`).Text())
		if s.noChapter != (latest == "no chapter known yet") {
			c.errorf("/ says %q of %s; its Latest Chapter is null: %v", latest, key, s.noChapter)
		}
		health := row.Find(`[data-testid="health"]`).AttrOr("data-health", "")
		want := ""
		switch {
		case s.finished:
			want = "finished"
		case s.failing:
			want = "failing"
		case s.done:
			want = "site-completed"
		}
		if health != want {
			c.errorf("/ marks %s %q, its row makes it %q", key, health, want)
		}
	})
}

// ageIn is an age as word.Age writes it.
var ageIn = regexp.MustCompile(`(\d+ (?:second|minute|hour|day|month|year)s?)`)

// age checks that an age read on p agrees with the moment it is the age
// of, which the database places within the pass at: what word.Age writes
// for a clock between p's from and to, and a moment within the pass. It
// keeps the age for the comparison across the restart.
func (c checker) age(what, shown string, at span, p page) {
	c.t.Helper()
	least, most := word.Age(p.from.Sub(at[1])), word.Age(p.to.Sub(at[0]))
	got := ageOf(shown)
	if got < ageOf(least) || got > ageOf(most) {
		c.errorf("%s for %q; the database's first occurrence, in the pass of %s, makes it %s to %s",
			what, shown, at[0].Format(time.TimeOnly), least, most)
	}
	c.r.ages[what] = got
}

// ageOf reads back an age word.Age wrote.
func ageOf(s string) time.Duration {
	n, unit, _ := strings.Cut(s, " ")
	v, err := strconv.Atoi(n)
	if err != nil {
		return -1
	}
	per := map[string]time.Duration{"second": time.Second, "minute": time.Minute, "hour": time.Hour,
		"day": 24 * time.Hour, "month": 30 * 24 * time.Hour, "year": 365 * 24 * time.Hour}[strings.TrimSuffix(unit, "s")]
	return time.Duration(v) * per
}

// hostOf is the Site's host as the pages name it.
func hostOf(site word.Site) string {
	a, _ := adapters.ByName(string(site))
	return a.Domains()[0]
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }
