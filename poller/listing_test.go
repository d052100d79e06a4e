package poller_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/poller/schedule"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// listingReader is the rig's fakeReader with a latest-updates listing: a
// script of results per page number (a script's last result repeats; a page
// with no script answers ok and names nothing), and one log of every
// request, listing pages and Series reads, in the order the Lane made them.
type listingReader struct {
	*fakeReader
	clk *clock

	mu    sync.Mutex
	pages map[int][]adapters.ListingResult
	log   []string
	// took is how far each listing page moves the rig's clock: the time a
	// page takes, so a page's marks and a later read differ in time.
	took time.Duration
}

func (l *listingReader) page(n int, rs ...adapters.ListingResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pages[n] = rs
}

func (l *listingReader) ReadListing(_ context.Context, _ string, page int) adapters.ListingResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = append(l.log, fmt.Sprintf("listing %d", page))
	rs := l.pages[page]
	res := adapters.ListingResult{Outcome: word.OK, Checked: true, Status: 200}
	switch {
	case len(rs) == 1:
		res = rs[0]
	case len(rs) > 1:
		res, l.pages[page] = rs[0], rs[1:]
	}
	l.clk.Advance(l.took)
	return res
}

func (l *listingReader) Read(ctx context.Context, s, u string) adapters.Result {
	l.mu.Lock()
	l.log = append(l.log, "read "+strings.TrimSuffix(strings.TrimPrefix(u, "https://novelfull.com/"), ".html"))
	l.mu.Unlock()
	return l.fakeReader.Read(ctx, s, u)
}

// calls returns the log since the last call, and clears it.
func (l *listingReader) calls() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.log
	l.log = nil
	return out
}

// withListing gives the rig's Poller a listing read every five minutes
// (set may change that Config).
func (r *rig) withListing(set ...func(*poller.Config)) *listingReader {
	r.lst = &listingReader{fakeReader: r.rd, clk: r.clk, pages: map[int][]adapters.ListingResult{}}
	r.p = r.poller(r.st, append([]func(*poller.Config){func(c *poller.Config) {
		c.ListingEvery = schedule.DefaultListingEvery
	}}, set...)...)
	return r.lst
}

// listed is a listing page that answered: pairs are "id:chapter", or
// "site/id:chapter" for a row another Site's reader would name.
func listed(more bool, pairs ...string) adapters.ListingResult {
	res := adapters.ListingResult{Outcome: word.OK, Checked: true, Status: 200, Listing: adapters.Listing{More: more}}
	for _, p := range pairs {
		ref, ch, _ := strings.Cut(p, ":")
		s, id, ok := strings.Cut(ref, "/")
		if !ok {
			s, id = site, ref
		}
		c, ok := word.ParseChapter(ch)
		if !ok {
			panic("not a chapter: " + p)
		}
		res.Listing.Entries = append(res.Listing.Entries, adapters.ListingEntry{
			Ref: adapters.Ref{Site: s, SeriesID: id, URL: url(id)}, Chapter: c})
	}
	return res
}

func listingFailed(o word.Outcome, status int) adapters.ListingResult {
	return adapters.ListingResult{Outcome: o, Status: status, Err: errors.New(string(o))}
}

// standing sets a Series read before: Latest Chapter latest (at the
// address okResult names, so a read of it changes nothing), checked ago
// before the clock, next owed a read in next (negative: already due).
func (r *rig) standing(id, latest string, ago, next time.Duration) {
	r.t.Helper()
	now := r.clk.Now()
	r.exec(`UPDATE series SET latest_chapter_num = $2::numeric, polled_chapter_num = $2::numeric, latest_chapter_url = $3,
		checked_at = $4, next_read_at = $5 WHERE site = $6 AND series_id = $1`,
		id, latest, okResult(latest).Facts.LatestChapterURL, now.Add(-ago), now.Add(next), site)
}

// arrival is one chapter_arrivals row.
type arrival struct {
	Num                string
	Noticed, Confirmed time.Time
	Listed             bool
}

func (r *rig) arrivals(id string) []arrival {
	r.t.Helper()
	rows, err := r.pool.Query(r.ctx, `SELECT chapter_num::text, noticed_at, confirmed_at, listed
		FROM chapter_arrivals WHERE site = $1 AND series_id = $2 ORDER BY id`, site, id)
	if err != nil {
		r.t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (arrival, error) {
		var a arrival
		err := row.Scan(&a.Num, &a.Noticed, &a.Confirmed, &a.Listed)
		return a, err
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return out
}

func (r *rig) lane() store.Lane {
	r.t.Helper()
	ln, err := r.st.GetLane(r.ctx, site)
	if err != nil {
		r.t.Fatal(err)
	}
	return ln
}

func sameArrivals(got, want []arrival) bool {
	return slices.EqualFunc(got, want, func(a, b arrival) bool {
		return a.Num == b.Num && a.Noticed.Equal(b.Noticed) && a.Confirmed.Equal(b.Confirmed) && a.Listed == b.Listed
	})
}

func TestAListedSeriesIsReadFirstAndItsReadRecordsTheListingsTime(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a", "b", "c", "l")
	for _, id := range []string{"a", "b", "c"} {
		r.standing(id, "10", 2*time.Hour, -30*time.Minute) // due by its own time
	}
	r.standing("l", "10", 10*time.Minute, 3*24*time.Hour) // its own read days away
	lst := r.withListing()
	lst.took = time.Minute
	// a at its Latest Chapter and b below it are not news.
	lst.page(1, listed(true, "l:11", "a:10"))
	lst.page(2, listed(false, "b:9"))
	r.rd.script(url("l"), okResult("11"))
	seen, read := t0.Add(time.Minute), t0.Add(2*time.Minute) // after page 1, after page 2

	pass := r.p.RunPass(r.ctx, site)
	if got, want := lst.calls(), []string{"listing 1", "listing 2", "read l", "read a", "read b", "read c"}; !slices.Equal(got, want) {
		t.Fatalf("requests %q, want %q", got, want)
	}
	want := store.ListingPass{Pages: 2, Entries: 3, Marked: 1, Outcome: word.OK}
	if pass.Listing != want {
		t.Fatalf("pass listing %+v, want %+v", pass.Listing, want)
	}
	if rows := r.passes(site); len(rows) != 1 || rows[0].ListingPass != want {
		t.Fatalf("pass log %+v, want listing %+v", rows, want)
	}
	l := r.get("l")
	if l.ListedChapter == nil || *l.ListedChapter != "11" || !l.ListedAt.Equal(seen) {
		t.Fatalf("listing recorded as %v at %v, want 11 at %v", l.ListedChapter, l.ListedAt, seen)
	}
	if l.LatestChapter == nil || *l.LatestChapter != "11" || !l.CheckedAt.Equal(read) {
		t.Fatalf("the confirming read left latest %v checked %v", l.LatestChapter, l.CheckedAt)
	}
	if got := r.arrivals("l"); !sameArrivals(got, []arrival{{"11", seen, read, true}}) {
		t.Fatalf("arrivals %+v, want 11 noticed by the listing at %v, confirmed at %v", got, seen, read)
	}
	for _, id := range []string{"a", "b", "c"} {
		if s := r.get(id); !s.ListedAt.IsZero() || len(r.arrivals(id)) != 0 {
			t.Fatalf("%s: listed %v, arrivals %+v", id, s.ListedAt, r.arrivals(id))
		}
	}
}

func TestAListingAloneWritesNoLatestChapterNoFailureAndNoCompletionHint(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("l")
	r.standing("l", "10", 10*time.Minute, 3*24*time.Hour)
	before := r.get("l")
	lst := r.withListing()
	lst.page(1, listed(false, "l:11"))
	r.rd.script(url("l"), failResult(word.Refused, 429, false))
	r.trace.reset()

	pass := r.p.RunPass(r.ctx, site)
	if pass.Counts.Refused != 1 || pass.Listing.Marked != 1 {
		t.Fatalf("pass %+v: want the listing to mark l and its read refused", pass)
	}
	l := r.get("l")
	if *l.LatestChapter != "10" || l.LatestChapterURL != before.LatestChapterURL || l.LatestRaisedBy != nil {
		t.Fatalf("the listing wrote Latest Chapter: %v %q", *l.LatestChapter, l.LatestChapterURL)
	}
	if !l.SiteCompletedAt.IsZero() || len(r.arrivals("l")) != 0 {
		t.Fatalf("the listing wrote a completion hint %v or an arrival %+v", l.SiteCompletedAt, r.arrivals("l"))
	}
	if _, ok := r.failure("l"); ok || len(r.trace.touching("poll_failures")) != 0 {
		t.Fatal("the listing or a refused read wrote a failure row")
	}
	// Two writes to the Series: the listing's mark and the read's stamp.
	w := r.trace.touching("series")
	if len(w) != 2 || !strings.Contains(w[0], "listed_chapter_num") || !isStamp(w[1]) {
		t.Fatalf("series writes %q, want the mark and the stamp", w)
	}
}

func TestAListingMarksOnlyTrackedPollableSeriesOfItsOwnSiteBelowTheNumber(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("k", "eq", "fin")
	r.orphans("o")
	for _, id := range []string{"k", "eq", "fin", "o"} {
		r.standing(id, "10", 10*time.Minute, 3*24*time.Hour)
	}
	r.exec(`UPDATE series SET finished_at = $1 WHERE series_id = 'fin'`, t0.Add(-time.Hour))
	lst := r.withListing()
	lst.page(1, listed(false, "o:11", "ghost:11", "asurascans/k:11", "eq:10", "fin:11"))

	pass := r.p.RunPass(r.ctx, site)
	if pass.Listing.Entries != 5 || pass.Listing.Marked != 0 {
		t.Fatalf("pass listing %+v: want five rows read and none marked", pass.Listing)
	}
	if got := lst.calls(); !slices.Equal(got, []string{"listing 1"}) {
		t.Fatalf("requests %q: nothing the listing named may be read", got)
	}
	for _, id := range []string{"k", "eq", "fin", "o"} {
		if s := r.get(id); !s.ListedAt.IsZero() || s.ListedChapter != nil {
			t.Fatalf("%s was marked: %v at %v", id, s.ListedChapter, s.ListedAt)
		}
	}
	if _, err := r.st.GetSeries(r.ctx, site, "ghost"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unknown Series the listing named: %v", err)
	}
}

func TestASeriesPageBehindItsListingCostsOneReadPerNewNumber(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("l")
	r.standing("l", "10", 10*time.Minute, 3*24*time.Hour)
	lst := r.withListing()
	lst.page(1, listed(false, "l:11"), listed(false, "l:11"), listed(false, "l:12"))
	r.rd.script(url("l"), okResult("10")) // the page lags behind

	for i, want := range [][]string{{"listing 1", "read l"}, {"listing 1"}, {"listing 1", "read l"}} {
		if i > 0 {
			r.clk.Advance(schedule.DefaultListingEvery)
		}
		r.p.RunPass(r.ctx, site)
		if got := lst.calls(); !slices.Equal(got, want) {
			t.Fatalf("pass %d: requests %q, want %q", i+1, got, want)
		}
	}
	if l := r.get("l"); *l.LatestChapter != "10" || *l.ListedChapter != "12" || len(r.arrivals("l")) != 0 {
		t.Fatalf("latest %v listed %v arrivals %+v", *l.LatestChapter, *l.ListedChapter, r.arrivals("l"))
	}
}

func TestAWalkFollowsNextPagesUntilItMeetsWhatItSawAndNoFurtherThanTheCap(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	lst := r.withListing()
	for n := 1; n <= schedule.MaxListingPages+2; n++ {
		lst.page(n, listed(true, fmt.Sprintf("p%d:1", n)))
	}
	pages := func(n int) []string {
		var out []string
		for i := 1; i <= n; i++ {
			out = append(out, fmt.Sprintf("listing %d", i))
		}
		return out
	}
	r.p.RunPass(r.ctx, site)
	if got := lst.calls(); !slices.Equal(got, pages(schedule.MaxListingPages)) {
		t.Fatalf("a first walk read %q, want the cap's %d pages", got, schedule.MaxListingPages)
	}

	// Five minutes on: a higher chapter of a Series seen before is news;
	// the first entry seen as it was stops the walk after its page.
	lst.page(1, listed(true, "new1:1", "p1:2"))
	lst.page(2, listed(true, "new2:1"))
	lst.page(3, listed(true, "new3:1", "p3:1"))
	r.clk.Advance(schedule.DefaultListingEvery)
	r.p.RunPass(r.ctx, site)
	if got := lst.calls(); !slices.Equal(got, pages(3)) {
		t.Fatalf("a second walk read %q, want pages 1 to 3", got)
	}

	r.clk.Advance(schedule.DefaultListingEvery - time.Second)
	r.p.RunPass(r.ctx, site)
	if got := lst.calls(); len(got) != 0 {
		t.Fatalf("a pass inside LISTING_EVERY read %q", got)
	}
	r.clk.Advance(time.Second)
	r.p.RunPass(r.ctx, site)
	if got := lst.calls(); !slices.Equal(got, pages(1)) {
		t.Fatalf("a walk whose first page repeats the last walk read %q", got)
	}
	var got []int
	for _, row := range r.passes(site) {
		got = append(got, row.ListingPass.Pages)
	}
	if want := []int{schedule.MaxListingPages, 3, 0, 1}; !slices.Equal(got, want) {
		t.Fatalf("pass log listing pages %v, want %v", got, want)
	}
}

func TestListingEveryZeroReadsNoListing(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	lst := r.withListing(func(c *poller.Config) { c.ListingEvery = 0 })
	lst.page(1, listed(false, "a:11"))
	r.pass()
	if got := lst.calls(); !slices.Equal(got, []string{"read a"}) {
		t.Fatalf("requests %q, want the Series' read alone", got)
	}
}

func TestAListingThatCannotBeReadWritesNothingAboutAnySeriesAndIsCounted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		res  adapters.ListingResult
		want word.Outcome
	}{
		{"refused", listingFailed(word.Refused, 429), word.Refused},
		{"unreachable", listingFailed(word.Unreachable, 0), word.Unreachable},
		{"errors", listingFailed(word.Errors, 500), word.Errors},
		{"an outcome outside the vocabulary", listingFailed("teapot", 418), word.Errors},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			r.series("l", "d")
			r.standing("l", "10", 10*time.Minute, 3*24*time.Hour)
			r.standing("d", "10", 2*time.Hour, -time.Minute)
			lst := r.withListing()
			c.res.Listing = listed(true, "l:11").Listing // whatever a failed page carries is not read
			lst.page(1, c.res)

			pass := r.p.RunPass(r.ctx, site)
			if got := lst.calls(); !slices.Equal(got, []string{"listing 1", "read d"}) {
				t.Fatalf("requests %q: want the failed page, then the due Series", got)
			}
			want := store.ListingPass{Pages: 1, Outcome: c.want}
			if rows := r.passes(site); pass.Listing != want || len(rows) != 1 || rows[0].ListingPass != want {
				t.Fatalf("pass %+v, log %+v: want listing %+v", pass.Listing, rows, want)
			}
			if l := r.get("l"); !l.ListedAt.IsZero() || l.ListedChapter != nil || *l.LatestChapter != "10" {
				t.Fatalf("l: listed %v at %v, latest %v", l.ListedChapter, l.ListedAt, *l.LatestChapter)
			}
			if _, ok := r.failure("l"); ok {
				t.Fatal("a failed listing wrote a failure row")
			}
			if ln := r.lane(); !ln.ListingReadAt.IsZero() || !ln.ListingEmptySince.IsZero() || !ln.RefuseUntil.IsZero() {
				t.Fatalf("lane %+v: a page that was not read says nothing about the listing reader", ln)
			}
		})
	}
}

func TestARefusedListingPageIsOneOfTheLanesTwoRefusals(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a", "b")
	lst := r.withListing()
	refused := listingFailed(word.Refused, 429)
	refused.RetryAfter = 2 * time.Hour
	lst.page(1, refused)
	r.rd.script(url("a"), failResult(word.Refused, 429, false))

	pass := r.pass()
	if got := lst.calls(); !slices.Equal(got, []string{"listing 1", "read a"}) {
		t.Fatalf("requests %q: a refused listing and one refused Poll must stop the Lane", got)
	}
	if !pass.Broken {
		t.Fatalf("pass %+v is not broken", pass)
	}
	// The listing's Retry-After is the Site's pace too.
	if got, want := r.lane().RefuseUntil, r.clk.Now().Add(2*time.Hour); !got.Equal(want) {
		t.Fatalf("lane refuses until %v, want %v", got, want)
	}
}

func TestABrokenListingIsTriedHourlyOnePageAndTheLaneFallsBackToCadence(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("d")
	lst := r.withListing()
	empty := listed(true)
	lst.page(1, empty, listingFailed(word.NoChapter, 200), empty, listed(true, "x:1"), listed(true, "y:1"))
	lst.page(2, listed(false, "z:1"))
	// d releases every eight hours and last did two hours ago; it is due now.
	owed := func() {
		r.exec(`UPDATE series SET cadence_s = 8*3600, chapter_arrived_at = $1, checked_at = $2, next_read_at = $3,
			latest_chapter_num = 10, latest_chapter_url = $4 WHERE series_id = 'd'`,
			r.clk.Now().Add(-2*time.Hour), r.clk.Now().Add(-2*time.Hour), r.clk.Now().Add(-time.Minute),
			okResult("10").Facts.LatestChapterURL)
	}
	// step moves the clock d, runs a pass, and checks the listing pages it
	// read (d's own reads are checked by its next read time).
	step := func(d time.Duration, want ...string) store.Lane {
		t.Helper()
		r.clk.Advance(d)
		r.p.RunPass(r.ctx, site)
		var got []string
		for _, c := range lst.calls() {
			if strings.HasPrefix(c, "listing") {
				got = append(got, c)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("at %v: listing pages %q, want %q", r.clk.Now().Sub(t0), got, want)
		}
		return r.lane()
	}

	owed()
	ln := step(0, "listing 1")
	if !ln.ListingEmptySince.Equal(t0) || !ln.ListingOKAt.IsZero() {
		t.Fatalf("an empty page: lane %+v, want empty since %v", ln, t0)
	}
	// A healthy listing watches the Site: d's cadence read is stretched.
	if got, want := r.get("d").NextReadAt, t0.Add(4*6*time.Hour); !got.Equal(want) {
		t.Fatalf("next read %v, want %v (six hours stretched four times)", got, want)
	}
	ln = step(6*time.Hour, "listing 1")
	if !ln.ListingEmptySince.Equal(t0) || !ln.ListingReadAt.Equal(t0.Add(6*time.Hour)) {
		t.Fatalf("a page that parsed to nothing: lane %+v, want still empty since %v", ln, t0)
	}

	// Twelve hours of nothing: broken. d is still read by its cadence, and
	// unstretched.
	r.clk.Advance(schedule.BrokenAfter - 6*time.Hour + time.Minute)
	owed()
	step(0, "listing 1")
	d := r.get("d")
	if !d.CheckedAt.Equal(r.clk.Now()) || !d.NextReadAt.Equal(r.clk.Now().Add(6*time.Hour)) {
		t.Fatalf("d checked %v next %v, want read now and next in six hours: a broken listing must not stretch the cadence",
			d.CheckedAt, d.NextReadAt)
	}
	step(30 * time.Minute)                 // not yet an hour
	ln = step(31*time.Minute, "listing 1") // hourly, and one page though it goes on
	if !ln.ListingEmptySince.IsZero() || !ln.ListingOKAt.Equal(r.clk.Now()) {
		t.Fatalf("a page naming a Series: lane %+v, want it no longer empty", ln)
	}
	// Healthy again: whole walks, every five minutes, and d's cadence
	// read (spare budget reads it an hour after the last) stretched again.
	step(time.Hour, "listing 1", "listing 2")
	d = r.get("d")
	if want := r.clk.Now().Add(4 * (8*time.Hour - r.clk.Now().Sub(d.ArrivedAt))); !d.CheckedAt.Equal(r.clk.Now()) || !d.NextReadAt.Equal(want) {
		t.Fatalf("d checked %v next %v, want read now and next at %v", d.CheckedAt, d.NextReadAt, want)
	}
	step(schedule.DefaultListingEvery, "listing 1")
}

func TestAPollRecordsAnArrivalOnlyForANewChapterAndLearnsTheCadence(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("s")
	r.rd.script(url("s"), okResult("10"), okResult("11"), okResult("11"), okResult("12"), okResult("12"))
	r.pass() // nothing → 10: the first read fills it in
	if got := r.arrivals("s"); len(got) != 0 {
		t.Fatalf("a first read recorded %+v", got)
	}
	first := r.clk.Now()
	r.pass() // 10 → 11
	if got := r.arrivals("s"); !sameArrivals(got, []arrival{{"11", first, r.clk.Now(), false}}) {
		t.Fatalf("arrivals %+v, want 11 noticed at the check before", got)
	}
	s := r.get("s")
	if !s.ArrivedAt.Equal(r.clk.Now()) || s.CadenceS != 0 {
		t.Fatalf("after one arrival: arrived %v cadence %ds, want now and unknown", s.ArrivedAt, s.CadenceS)
	}
	r.pass() // 11 again
	if got := r.arrivals("s"); len(got) != 1 {
		t.Fatalf("an unchanged read recorded an arrival: %+v", got)
	}
	r.clk.Advance(3 * time.Hour)
	r.pass() // 12, five hours after 11
	s = r.get("s")
	if got := r.arrivals("s"); len(got) != 2 || got[1].Num != "12" {
		t.Fatalf("arrivals %+v", got)
	}
	if s.CadenceS != 5*3600 || !s.NextReadAt.Equal(r.clk.Now().Add(5*time.Hour)) {
		t.Fatalf("cadence %ds next %v; want 5h and the next chapter's expected time", s.CadenceS, s.NextReadAt)
	}

	// A healthy, unchanged Poll of a Series with a schedule is still one
	// statement: the next read time rides on the stamp.
	r.clk.Advance(5 * time.Hour)
	r.trace.reset()
	r.pass() // six hours quiet, cadence five: look again in a quarter cadence
	if polls := r.trace.polls(); len(polls) != 1 || !isStamp(polls[0]) {
		t.Fatalf("an unchanged Poll ran %q", polls)
	}
	if got, want := r.get("s").NextReadAt, r.clk.Now().Add(5*time.Hour/4); !got.Equal(want) {
		t.Fatalf("next %v, want %v", got, want)
	}
}

func TestAConfirmedSightingIsAnArrivalNoticedAtTheSighting(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("t")
	r.pass() // 10
	r.clk.Advance(10 * time.Minute)
	sighted := r.clk.Now()
	if ok, err := r.st.RaiseLatest(r.ctx, site, "t", "11", okResult("11").Facts.LatestChapterURL, "rig-reader", sighted); err != nil || !ok {
		t.Fatalf("sighting: %v %v", ok, err)
	}
	r.rd.script(url("t"), okResult("11"))
	r.pass()
	if got := r.arrivals("t"); !sameArrivals(got, []arrival{{"11", sighted, r.clk.Now(), false}}) {
		t.Fatalf("arrivals %+v, want 11 noticed at the Sighting %v", got, sighted)
	}
	if s := r.get("t"); s.LatestRaisedBy != nil {
		t.Fatalf("the confirmed Sighting is still attributed to %v", *s.LatestRaisedBy)
	}
}

func TestASightingIsReadRightAfterForcedPollsAndBeforeTheListing(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("d", "f", "l", "q", "s")
	for _, id := range []string{"f", "l", "q", "s"} {
		r.standing(id, "10", 10*time.Minute, 3*24*time.Hour)
	}
	r.standing("d", "10", 2*time.Hour, -time.Minute)
	lst := r.withListing()
	lst.page(1, listed(false, "l:11"))
	if err := r.st.ForceSeriesPoll(r.ctx, site, "f", r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.RaiseLatest(r.ctx, site, "s", "11", "", "rig-reader", r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	r.p.RunPass(r.ctx, site)
	if got, want := lst.calls(), []string{"listing 1", "read f", "read s", "read l", "read d"}; !slices.Equal(got, want) {
		t.Fatalf("requests %q, want %q", got, want)
	}
	if s := r.get("s"); !s.CheckedAt.Equal(r.clk.Now()) {
		t.Fatalf("the sighted Series was not read: checked %v", s.CheckedAt)
	}
}

func TestASightingMidPassWaitsOneBatch(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ids := []string{"d1", "d2", "d3", "d4", "d5", "d6", "s"}
	r.series(ids...)
	for _, id := range ids[:6] {
		r.standing(id, "10", 2*time.Hour, -time.Minute)
	}
	r.standing("s", "10", 10*time.Minute, 3*24*time.Hour)
	lst := r.withListing()
	var once sync.Once
	r.rd.before = func(u string) {
		once.Do(func() {
			if _, err := r.st.RaiseLatest(r.ctx, site, "s", "11", "", "rig-reader", r.clk.Now()); err != nil {
				t.Error(err)
			}
		})
	}
	r.p.RunPass(r.ctx, site)
	want := []string{"listing 1", "read d1", "read d2", "read d3", "read d4", "read s", "read d5", "read d6"}
	if got := lst.calls(); !slices.Equal(got, want) {
		t.Fatalf("requests %q, want %q", got, want)
	}
}

func TestAnOrphanIsReadOnlyAtTheBackstop(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("b")
	r.orphans("o")
	r.pass() // both never read: owed at once
	read := r.clk.Now()
	aim := schedule.DefaultBackstop - schedule.DefaultBackstop/50
	if got := r.get("o").NextReadAt; !got.Equal(read.Add(aim)) {
		t.Fatalf("the orphan's next read %v, want %v", got, read.Add(aim))
	}
	r.pass() // an hour on: spare budget reads the bookmarked Series only
	if r.rd.readsOf(url("b")) != 2 || r.rd.readsOf(url("o")) != 1 {
		t.Fatalf("reads b=%d o=%d, want 2 and 1", r.rd.readsOf(url("b")), r.rd.readsOf(url("o")))
	}
	r.clk.Advance(read.Add(aim).Sub(r.clk.Now()) - time.Hour - time.Minute)
	r.pass() // a minute before its time
	if n := r.rd.readsOf(url("o")); n != 1 {
		t.Fatalf("the orphan was read %d times before its backstop", n)
	}
	r.clk.Advance(time.Minute)
	r.p.RunPass(r.ctx, site)
	if n := r.rd.readsOf(url("o")); n != 2 {
		t.Fatalf("the orphan was not read at its backstop (%d reads)", n)
	}
}

func TestAListingThatFailsIsRecordedWithItsFirstFailureKeptAcrossAttemptsAndARestart(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	r.standing("a", "10", 10*time.Minute, 3*24*time.Hour)
	lst := r.withListing()
	lst.page(1, listingFailed(word.Unreachable, 0))

	r.p.RunPass(r.ctx, site)
	want := store.ListingAttempt{TriedAt: t0, Outcome: word.Unreachable, FailingSince: t0}
	if got := r.lane().ListingAttempt; got != want {
		t.Fatalf("after an unreachable listing: %+v, want %+v", got, want)
	}
	// The next walk fails too: tried later, failing since the first.
	r.clk.Advance(schedule.DefaultListingEvery)
	r.p.RunPass(r.ctx, site)
	want.TriedAt = r.clk.Now()
	if got := r.lane().ListingAttempt; got != want {
		t.Fatalf("after a second unreachable listing: %+v, want %+v", got, want)
	}
	// A restart: a new Poller on the same database. Its first walk is owed
	// at once, fails, and the failure still dates from the first.
	r.clk.Advance(time.Minute)
	r.p.Close()
	lst = r.withListing()
	lst.page(1, listingFailed(word.Refused, 429))
	r.p.RunPass(r.ctx, site)
	want.TriedAt, want.Outcome = r.clk.Now(), word.Refused
	if got := r.lane().ListingAttempt; got != want {
		t.Fatalf("after a restart and a refused listing: %+v, want %+v", got, want)
	}
	// A walk the Site answers ends the run, with its rows and marks.
	r.clk.Advance(schedule.DefaultListingEvery)
	lst.page(1, listed(false, "a:11", "x:3"))
	r.p.RunPass(r.ctx, site)
	want = store.ListingAttempt{TriedAt: r.clk.Now(), Outcome: word.OK, Entries: 2, Marked: 1}
	ln := r.lane()
	if ln.ListingAttempt != want || !ln.ListingReadAt.Equal(r.clk.Now()) {
		t.Fatalf("after a listing read: %+v read at %v, want %+v read now", ln.ListingAttempt, ln.ListingReadAt, want)
	}
}
