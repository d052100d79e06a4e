package poller_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/internal/metrics"
	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

func TestEachWritingOutcomeInsertsAFailureRowWithItsWord(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		res     adapters.Result
		checked int
	}{
		{"a page read with no chapter on it is no_chapter", failResult(word.NoChapter, 200, true), 1},
		{"an address failing the fetch gate is unfetchable", failResult(word.Unfetchable, 0, false), 0},
		{"a 404 is not_found", failResult(word.NotFound, 404, true), 1},
		{"a 410 is not_found", failResult(word.NotFound, 410, true), 1},
		{"a 503 is errors and was checked", failResult(word.Errors, 503, true), 1},
		{"a plain 403 is errors and was checked", failResult(word.Errors, 403, true), 1},
		{"a timeout is errors and was not checked", failResult(word.Errors, 0, false), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			r.series("s")
			r.rd.script(url("s"), c.res)
			pass := r.pass()
			f, ok := r.failure("s")
			if !ok || f.Outcome != c.res.Outcome || !f.FailingSince.Equal(r.clk.Now()) {
				t.Fatalf("failure row: %+v present=%v, want %s since now", f, ok, c.res.Outcome)
			}
			if pass.Counts.Of(c.res.Outcome) != 1 || pass.Checked != c.checked || pass.Due != 1 {
				t.Fatalf("pass: %+v, want one %s and checked=%d", pass, c.res.Outcome, c.checked)
			}
			row := r.passes(site)[0]
			if row.Checked != c.checked || row.Due != 1 || row.Skip != "" {
				t.Fatalf("pass log row: %+v", row)
			}
		})
	}
}

func TestARepeatedIdenticalFailureWritesNothing(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("s")
	r.rd.script(url("s"), failResult(word.NoChapter, 200, true))
	r.pass()
	before, _ := r.failure("s")
	version := r.xmin("s")

	r.pass()
	after, ok := r.failure("s")
	if !ok || after != before {
		t.Fatalf("row changed: %+v -> %+v", before, after)
	}
	if got := r.xmin("s"); got != version {
		t.Fatalf("the identical failure rewrote the row (xmin %s -> %s)", version, got)
	}
}

func TestAChangedWordUpdatesTheWordAndKeepsFailingSince(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("s")
	r.rd.script(url("s"), failResult(word.NoChapter, 200, true), failResult(word.NotFound, 404, true))
	r.pass()
	first, _ := r.failure("s")
	r.clk.Advance(90 * 24 * time.Hour)
	r.pass()
	f, ok := r.failure("s")
	if !ok || f.Outcome != "not_found" {
		t.Fatalf("word not updated: %+v %v", f, ok)
	}
	if f.FailingSince != first.FailingSince {
		t.Fatalf("failing_since reset: %v -> %v", first.FailingSince, f.FailingSince)
	}
}

func TestASuccessfulReadDeletesTheFailureRow(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("s")
	r.rd.script(url("s"), failResult(word.Errors, 503, true), okResult("10"))
	r.pass()
	if _, ok := r.failure("s"); !ok {
		t.Fatal("no failure row after errors")
	}
	r.pass()
	if f, ok := r.failure("s"); ok {
		t.Fatalf("failure row survived a correct read: %+v", f)
	}
}

func TestRefusedAndUnreachablePollsNeitherInsertNorDelete(t *testing.T) {
	t.Parallel()
	for _, o := range []word.Outcome{word.Refused, word.Unreachable} {
		for _, seeded := range []bool{false, true} {
			name := "a " + string(o) + " Poll on a healthy Series inserts nothing"
			if seeded {
				name = "a " + string(o) + " Poll on a failing Series deletes nothing"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				r := newRig(t)
				r.series("s")
				r.rd.routes[site] = routeFor(o)
				if seeded {
					storetest.Insert(t, r.pool, storetest.Failure{Site: site, Series: "s", Outcome: word.NotFound, FailingSince: storetest.Milli(42)})
					r.exec(`UPDATE series SET site_completed_at = $1 WHERE series_id = 's'`, storetest.Milli(7))
				}
				res := failResult(o, 0, false)
				res.Facts = adapters.Facts{Completed: false}
				r.rd.script(url("s"), res)
				r.trace.reset()
				pass := r.pass()
				if pass.Counts.Of(o) != 1 || pass.Checked != 0 {
					t.Fatalf("pass: %+v", pass)
				}
				f, ok := r.failure("s")
				if seeded && (!ok || f.Outcome != "not_found" || !f.FailingSince.Equal(storetest.Milli(42))) {
					t.Fatalf("seeded row changed: %+v present=%v", f, ok)
				}
				if !seeded && ok {
					t.Fatalf("row inserted: %+v", f)
				}
				if w := r.trace.touching("poll_failures"); len(w) != 0 {
					t.Fatalf("statements on poll_failures: %q", w)
				}
				// No statement at all beyond the stamp: not on the failure
				// row, not on the hint, not on anything else.
				if q := r.trace.polls(); len(q) != 1 || !isStamp(q[0]) {
					t.Fatalf("a %s Poll ran %q; want the check stamp alone", o, q)
				}
				if seeded && !r.get("s").SiteCompletedAt.Equal(storetest.Milli(7)) {
					t.Fatalf("completion hint changed by a %s Poll", o)
				}
			})
		}
	}
}

// routeFor gives unreachable its natural home, a browser Site.
func routeFor(o word.Outcome) word.Route {
	if o == word.Unreachable {
		return word.RouteBrowser
	}
	return word.RoutePlain
}

func TestAForcedPollThatSucceedsDeletesTheRowAndARequestAloneDoesNot(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("s")
	r.rd.script(url("s"), failResult(word.NoChapter, 200, true), okResult("10"))
	r.pass() // fails: row written, checked now
	r.clk.Advance(time.Minute)
	if err := r.st.ForceSeriesPoll(r.ctx, site, "s", r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.failure("s"); !ok {
		t.Fatal("the forced request alone cleared the failure row")
	}
	r.clk.Advance(time.Minute) // not due by age: only the force makes it due
	pass := r.p.RunPass(r.ctx, site)
	if pass.Due != 1 || pass.Counts.OK != 1 {
		t.Fatalf("forced Series not polled: %+v", pass)
	}
	if _, ok := r.failure("s"); ok {
		t.Fatal("a forced Poll that read the page left the failure row")
	}
	r.clk.Advance(time.Minute)
	if pass := r.p.RunPass(r.ctx, site); pass.Due != 0 {
		t.Fatalf("a served force is still due: %+v", pass)
	}
}

// A Forced Poll is served when its read has finished, not when the check
// stamp is written as the read starts: while the read runs, the request is
// still there for the owner's page to show as pending (CONTEXT.md, Forced
// Poll); a refused read serves it too.
func TestAForcedPollIsServedOnlyOnceItsReadHasFinished(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("s")
	r.pass()
	r.clk.Advance(time.Minute)
	if err := r.st.ForceSeriesPoll(r.ctx, site, "s", r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	var during store.Series
	r.rd.before = func(string) { during = r.get("s") }
	r.rd.script(url("s"), failResult(word.Refused, 429, false))
	if pass := r.p.RunPass(r.ctx, site); pass.Due != 1 {
		t.Fatalf("forced Series not polled: %+v", pass)
	}
	if during.ForcePollAt.IsZero() || during.ForcePollAt.After(during.CheckedAt) {
		t.Fatalf("during the read: force %v, check %v; want the request kept while the stamp passed it", during.ForcePollAt, during.CheckedAt)
	}
	if s := r.get("s"); !s.ForcePollAt.IsZero() {
		t.Fatalf("a finished read left its Forced Poll pending: %v", s.ForcePollAt)
	}
}

func TestTheCompletionWriteFiresOnlyOnATransition(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("s")
	ongoing, done := okResult("10"), okResult("10")
	done.Facts.Completed = true
	r.rd.script(url("s"), ongoing, ongoing, done, done, ongoing)
	r.pass() // the first read sets the chapter; from here only the hint moves

	steps := []struct {
		name       string
		wantWrite  bool
		wantMarked bool
	}{
		{"an ordinary Poll of an ongoing Series", false, false},
		{"the read that first sees completed", true, true},
		{"a second completed read", false, true},
		{"the read that sees it resume", true, false},
	}
	for _, s := range steps {
		r.trace.reset()
		r.pass()
		wrote := len(r.trace.touching("series")) > 1 // beyond the check stamp
		got := r.get("s").SiteCompletedAt
		if wrote != s.wantWrite || (!got.IsZero()) != s.wantMarked {
			t.Fatalf("%s: wrote=%v site_completed_at=%v", s.name, wrote, got)
		}
		if s.wantMarked && s.wantWrite && !got.Equal(r.clk.Now()) {
			t.Fatalf("%s: site_completed_at %v is not the read's time", s.name, got)
		}
	}
	// Completed again, then refused: the hint keeps its value.
	r.rd.script(url("s"), done, failResult(word.Refused, 403, false))
	r.pass()
	marked := r.get("s").SiteCompletedAt
	r.pass()
	if got := r.get("s").SiteCompletedAt; got != marked || got.IsZero() {
		t.Fatalf("a refused Poll changed the hint: %v -> %v", marked, got)
	}
}

func TestAHealthyUnchangedPollWritesExactlyOneStatement(t *testing.T) {
	t.Parallel()
	// With the metrics on: what they count rides on what the pass holds
	// (issue 25, item 5), so the statements below are all there are.
	r := newRig(t)
	reg := prometheus.NewRegistry()
	dom, err := metrics.NewDomain(reg, r.st, metrics.DomainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.with(func(c *poller.Config) { c.Observer = dom })
	r.series("s", "t", "u")
	storetest.Insert(t, r.pool, storetest.Failure{Site: site, Series: "u", Outcome: word.Errors, FailingSince: storetest.Milli(1)})
	r.pass() // first read: sets chapter 10 and its address; u recovers
	// t has a schedule (a learned cadence, an arrival, a served listing
	// mark and Sighting): its next read time rides on the stamp, nothing more.
	r.exec(`UPDATE series SET cadence_s = 86400, chapter_arrived_at = $1, listed_chapter_num = 10, listed_at = $2,
		sighted_at = $2 WHERE series_id = 't'`, r.clk.Now().Add(-30*time.Hour), r.clk.Now().Add(-time.Hour))
	r.trace.reset()
	pass := r.pass()
	if pass.Counts.OK != 3 {
		t.Fatalf("pass: %+v", pass)
	}
	// Counted per Poll, and every statement counts, not only those that
	// begin with a write keyword: three healthy Polls are three stamps.
	polls := r.trace.polls()
	if len(polls) != 3 {
		t.Fatalf("three healthy Polls ran %d statements, want one each (the stamp): %q", len(polls), polls)
	}
	for _, q := range polls {
		if !isStamp(q) {
			t.Fatalf("a healthy Poll ran %q besides its check stamp", q)
		}
	}
	if next := r.get("t").NextReadAt; !next.Equal(r.clk.Now().Add(6 * time.Hour)) {
		t.Fatalf("t's next read %v, want a quarter cadence on: the stamp did not carry its schedule", next)
	}
	// Everything else the pass wrote is its own pass-log row, and the
	// renewal of the Lane's lease at its start: once per pass, not per
	// Poll (ADR 0018).
	lease := len(r.trace.touching("lane_leases"))
	if w := r.trace.writes(); len(w)-lease != 4 || len(r.trace.touching("poll_passes")) != 1 || lease < 1 {
		t.Fatalf("%d write statements, want three stamps, the pass-log row and the lease: %q", len(w), w)
	}
	if n := observedPolls(t, reg, "ok"); n != 6 {
		t.Fatalf("the metrics counted %v ok Polls over the two passes, want 6", n)
	}
}

// observedPolls is mangabookmark_polls_total{site="novelfull",outcome} in reg.
func observedPolls(t *testing.T, reg *prometheus.Registry, outcome word.Outcome) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if f.GetName() == "mangabookmark_polls_total" && labels["site"] == site && labels["outcome"] == string(outcome) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1
}

func TestAStillFailingSeriesCostsTheStampAndOneUpsertThatChangesNothing(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("s")
	r.rd.script(url("s"), failResult(word.NotFound, 404, true))
	r.pass()
	r.trace.reset()
	r.pass()
	if w := r.trace.touching("series"); len(w) != 1 {
		t.Fatalf("series writes: %q", w)
	}
	if w := r.trace.touching("poll_failures"); len(w) != 1 {
		t.Fatalf("one upsert (that changes nothing) expected, got %q", w)
	}
}

func TestTheLatestChapterFollowsTheRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		current    string // '' = NULL
		raisedBy   bool
		polled     string // the highest number a read showed before; '' = NULL
		read       string
		want       string
		wantRaise  bool // latest_raised_by still set
		wantPolled string
		wantWrite  bool
	}{
		{"a first read sets the number", "", false, "", "10", "10", false, "10", true},
		{"a higher read raises it", "10", false, "10", "12.5", "12.5", false, "12.5", true},
		{"the same read writes nothing", "10", false, "10", "10", "10", false, "10", false},
		{"a lower read writes nothing", "10", false, "10", "9", "10", false, "10", false},
		{"a read at a Reader's number confirms it", "12", true, "10", "12", "12", false, "12", true},
		{"a read above a Reader's number replaces it", "12", true, "10", "13", "13", false, "13", true},
		{"a read below a Reader's number leaves it unconfirmed", "12", true, "11", "11", "12", true, "11", false},
		// The Sighting bound's base follows the page (issue 22, item 11).
		{"a read below a Reader's number that shows more than before is remembered", "12", true, "10", "11", "12", true, "11", true},
		{"a read above the owner's Correction never lowers what the page showed", "8", false, "10", "9", "9", false, "10", true},
		{"numbers compare as numbers, not text", "9", false, "9", "10", "10", false, "10", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			r.series("s")
			storetest.Insert(t, r.pool, storetest.Reader{ID: "reader", CreatedAt: storetest.Milli(1)})
			if c.current != "" {
				by := any(nil)
				if c.raisedBy {
					by = "reader"
				}
				res := okResult(c.current)
				r.exec(`UPDATE series SET latest_chapter_num = $1::numeric, latest_chapter_url = $2, latest_raised_by = $3,
					polled_chapter_num = nullif($4, '')::numeric WHERE series_id = 's'`,
					c.current, res.Facts.LatestChapterURL, by, c.polled)
			}
			r.rd.script(url("s"), okResult(c.read))
			r.trace.reset()
			r.pass()
			s := r.get("s")
			if s.LatestChapter == nil || *s.LatestChapter != c.want {
				t.Fatalf("latest: %v, want %s", s.LatestChapter, c.want)
			}
			if (s.LatestRaisedBy != nil) != c.wantRaise {
				t.Fatalf("latest_raised_by: %v", s.LatestRaisedBy)
			}
			if s.PolledChapter == nil || *s.PolledChapter != c.wantPolled {
				t.Fatalf("polled: %v, want %s", s.PolledChapter, c.wantPolled)
			}
			if wrote := len(r.trace.touching("series")) > 1; wrote != c.wantWrite {
				t.Fatalf("wrote=%v: %q", wrote, r.trace.touching("series"))
			}
		})
	}
}

func TestAFailedCheckStampIsErrorsUncheckedAndNothingIsFetched(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	r.exec(`CREATE FUNCTION no_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.checked_at IS DISTINCT FROM OLD.checked_at THEN RAISE EXCEPTION 'disk full'; END IF; RETURN NEW; END $$`)
	r.exec(`CREATE TRIGGER no_stamp BEFORE UPDATE ON series FOR EACH ROW EXECUTE FUNCTION no_stamp()`)
	pass := r.pass()
	if pass.Counts.Errors != 1 || pass.Checked != 0 || pass.Skip != "" || pass.Due != 1 {
		t.Fatalf("pass: %+v", pass)
	}
	if r.rd.readsOf(url("a")) != 0 {
		t.Fatal("a page was fetched without its check stamp")
	}
	if f, ok := r.failure("a"); !ok || f.Outcome != "errors" {
		t.Fatalf("failure row: %+v %v", f, ok)
	}
	// The pass log shows it as the stall it is.
	if row := r.passes(site)[0]; row.Due != 1 || row.Checked != 0 || row.Skip != "" || row.Refused != 0 {
		t.Fatalf("pass log: %+v", row)
	}
}

func TestAWriteThatFailsAfterACorrectReadIsErrorsButChecked(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a")
	r.exec(`CREATE FUNCTION no_chapter_write() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.latest_chapter_num IS DISTINCT FROM OLD.latest_chapter_num THEN RAISE EXCEPTION 'disk full'; END IF; RETURN NEW; END $$`)
	r.exec(`CREATE TRIGGER no_chapter_write BEFORE UPDATE ON series FOR EACH ROW EXECUTE FUNCTION no_chapter_write()`)
	pass := r.pass()
	if pass.Counts.Errors != 1 || pass.Counts.OK != 0 || pass.Checked != 1 {
		t.Fatalf("pass: %+v", pass)
	}
	if f, ok := r.failure("a"); !ok || f.Outcome != "errors" {
		t.Fatalf("failure row: %+v %v", f, ok)
	}
	if !strings.Contains(r.logs.String(), "write after read failed") {
		t.Fatal("not logged")
	}
}

func TestAnOutcomeOutsideTheVocabularyIsErrors(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("s")
	r.rd.script(url("s"), adapters.Result{Outcome: "gone-fishing", Checked: true, Status: 200})
	pass := r.pass()
	if pass.Counts.Errors != 1 || pass.Counts.Of("gone-fishing") != 0 {
		t.Fatalf("pass: %+v", pass)
	}
	if f, ok := r.failure("s"); !ok || f.Outcome != "errors" {
		t.Fatalf("failure row: %+v present=%v; want errors, never an unknown word", f, ok)
	}
	if row := r.passes(site)[0]; row.Errors != 1 || row.Checked != 1 {
		t.Fatalf("pass log: %+v", row)
	}
	if !strings.Contains(r.logs.String(), `reader returned outcome \"gone-fishing\"`) {
		t.Fatalf("the bad word was not logged:\n%s", r.logs.String())
	}
}

func TestACheckStampTheServerRefusesDoesNotStopThePass(t *testing.T) {
	t.Parallel()
	// A statement the server answered with an error is that Series' errors;
	// only a database that cannot be reached stops the pass.
	r := newRig(t)
	r.series("a", "b", "c")
	r.exec(`CREATE FUNCTION no_stamp_b() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.series_id = 'b' AND NEW.checked_at IS DISTINCT FROM OLD.checked_at THEN RAISE EXCEPTION 'disk full'; END IF; RETURN NEW; END $$`)
	r.exec(`CREATE TRIGGER no_stamp_b BEFORE UPDATE ON series FOR EACH ROW EXECUTE FUNCTION no_stamp_b()`)
	pass := r.pass()
	if pass.Counts.Errors != 1 || pass.Counts.OK != 2 {
		t.Fatalf("pass: %+v; want b errors and a, c read", pass)
	}
	if strings.Contains(r.logs.String(), "pass stopped") {
		t.Fatal("a refused statement stopped the pass")
	}
}

func TestSeriesWhoseStampsFailDoNotEndThePassForTheRest(t *testing.T) {
	t.Parallel()
	// More Series than a batch, first in the order, whose check stamps the
	// server refuses: they stay due and are tried once; the Series behind
	// them are still read, and the Lane's Forced Poll is served only then.
	r := newRig(t)
	r.series("a1", "a2", "a3", "a4", "a5", "a6", "b1", "b2")
	r.exec(`CREATE FUNCTION no_stamp_a() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.series_id LIKE 'a%' AND NEW.checked_at IS DISTINCT FROM OLD.checked_at THEN RAISE EXCEPTION 'disk full'; END IF; RETURN NEW; END $$`)
	r.exec(`CREATE TRIGGER no_stamp_a BEFORE UPDATE ON series FOR EACH ROW EXECUTE FUNCTION no_stamp_a()`)
	if err := r.st.ForceLanePoll(r.ctx, site, r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	pass := r.pass()
	if pass.Counts.Errors != 6 || pass.Counts.OK != 2 || r.rd.readsOf(url("b1")) != 1 || r.rd.readsOf(url("b2")) != 1 {
		t.Fatalf("pass %+v: want the six a's errors and b1, b2 read", pass)
	}
	if ln := r.lane(); !ln.ForcePollAt.IsZero() {
		t.Fatal("the Lane's Forced Poll was not served though every Series was tried")
	}
}

func TestAForcedLaneIsNotServedWhileSeriesBehindFailedStampsAreUnread(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("a1", "a2", "a3", "a4", "a5", "a6", "b1", "b2")
	r.with(func(c *poller.Config) { c.MaxPerPass = 6 })
	r.exec(`CREATE FUNCTION no_stamp_a() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.series_id LIKE 'a%' AND NEW.checked_at IS DISTINCT FROM OLD.checked_at THEN RAISE EXCEPTION 'disk full'; END IF; RETURN NEW; END $$`)
	r.exec(`CREATE TRIGGER no_stamp_a BEFORE UPDATE ON series FOR EACH ROW EXECUTE FUNCTION no_stamp_a()`)
	r.clk.Advance(time.Hour)
	if err := r.st.ForceLanePoll(r.ctx, site, r.clk.Now()); err != nil {
		t.Fatal(err)
	}
	r.p.RunPass(r.ctx, site) // six tries, all a's: b1 and b2 still owed
	if ln := r.lane(); ln.ForcePollAt.IsZero() {
		t.Fatal("the Lane's Forced Poll was served with b1 and b2 unread")
	}
}

// Issue 22, item 11: a Reader's Sighting raised a number the Site's page
// never shows. Healthy reads leave it standing (only a read at or above it,
// or the owner, replaces it: CONTEXT.md, Sighting), and after ownerWindow
// of them the owner's unverified filter lists it, as it would a failing one.
func TestARaisedNumberHealthyReadsNeverShowIsUnverifiedAfterTwelveHours(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("s")
	r.rd.script(url("s"), okResult("271"))
	r.pass()
	storetest.Ensure(t, r.pool, storetest.Reader{ID: "ada", Name: "Ada"})
	if raised, err := r.st.RaiseLatest(r.ctx, site, "s", "300", "", "ada", r.clk.Now()); err != nil || !raised {
		t.Fatalf("raise: %v %v", raised, err)
	}
	unverified := func() bool {
		t.Helper()
		d, err := r.st.GetAdminSeries(r.ctx, site, "s", r.clk.Now())
		if err != nil {
			t.Fatal(err)
		}
		return d.Unverified
	}
	r.pass() // the Sighting wakes the Lane: this read shows 271
	if unverified() {
		t.Fatal("an hour after the raise it is not unverified yet")
	}
	reads := r.rd.reads[url("s")]
	for range 12 {
		r.pass()
	}
	s := r.get("s")
	if _, failing := r.failure("s"); failing || r.rd.reads[url("s")] <= reads {
		t.Fatalf("the reads were not healthy, or none happened: failing %v, reads %d then %d", failing, reads, r.rd.reads[url("s")])
	}
	if *s.LatestChapter != "300" || s.LatestRaisedBy == nil || *s.LatestRaisedBy != "ada" || *s.PolledChapter != "271" {
		t.Fatalf("latest %v by %v, polled %v", *s.LatestChapter, s.LatestRaisedBy, s.PolledChapter)
	}
	if !unverified() {
		t.Fatal("thirteen hours of healthy reads showing 271 below a raised 300: not unverified")
	}
	// A read that shows the number confirms it: the attribution goes, and
	// the list lets go of it.
	r.rd.script(url("s"), okResult("300"))
	r.exec(`UPDATE series SET force_poll_at = $1 WHERE series_id = 's'`, r.clk.Now())
	r.pass()
	if s := r.get("s"); s.LatestRaisedBy != nil || unverified() {
		t.Fatalf("a read at 300 left it unconfirmed: %v", s.LatestRaisedBy)
	}
}

// A Series announced before its first chapter has a page with its title and
// cover and no chapter: the read is no_chapter, and the page still gives the
// Series its face, so the lists name it rather than show its id, and its
// cover can be fetched.
func TestAPageReadWithNoChapterStillGivesTheSeriesItsTitleAndCover(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("s")
	res := failResult(word.NoChapter, 200, true)
	res.Facts = adapters.Facts{Title: "Coming Soon", CoverURL: "https://novelfull.com/uploads/s.jpg", Kind: word.Novel}
	r.rd.script(url("s"), res)
	r.pass()
	if f, ok := r.failure("s"); !ok || f.Outcome != word.NoChapter {
		t.Fatalf("failure row: %+v present=%v, want no_chapter", f, ok)
	}
	s, err := r.st.GetSeries(r.ctx, site, "s")
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != "Coming Soon" || s.CoverURL != "https://novelfull.com/uploads/s.jpg" {
		t.Fatalf("title %q, cover address %q: want the page's", s.Title, s.CoverURL)
	}
}
