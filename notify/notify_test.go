package notify_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

func TestEachConditionFiresOnceWhileItHoldsAndAgainAfterItLiftsAndReturns(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		browser []string
		site    string // the Lane that passes
		want    string // footer and title of the one message per episode
		during  pass   // the Lane's passes while the condition holds
		begin   func(h *harness, at float64)
		lift    func(h *harness, at float64)
	}{
		{name: "a stall on a plain Site", site: "asurascans", want: "stall asurascans", during: stallPass},
		{
			name: "a stall on a browser Site", browser: []string{"comix", "kagane"},
			site: "comix", want: "stall comix", during: stallPass,
		},
		{
			name: "a plain Site refusing with no browser route",
			site: "novelfull", want: "no-browser-route novelfull", during: refusingPass,
		},
		{
			name: "the sidecar out of reach of the browser Lanes", browser: []string{"comix", "kagane"},
			site: "kagane", want: "sidecar-down browser sidecar", during: browserDownPass,
		},
		{
			name: "most of a Site's Series yielding no chapter",
			site: "demonicscans", want: "adapter-broken demonicscans",
			during: pass{due: 4, checked: 4, ok: 1, noChapter: 3},
			// Half an hour in, so the window's edge falls between two passes.
			begin: func(h *harness, at float64) { h.failing("demonicscans", 3, "no_chapter", hours(at+0.5)) },
			lift:  func(h *harness, _ float64) { h.healed("demonicscans") },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config{browser: tc.browser})
			h.series(tc.site, 4)
			episode := func(from float64, sent ...string) {
				t.Helper()
				if tc.begin != nil {
					tc.begin(h, from)
				}
				h.run(tc.site, from, from+13, tc.during) // the last pass sees exactly 12 h: not past
				h.wantMessages(sent[:len(sent)-1]...)
				h.run(tc.site, from+13, from+40, tc.during) // past the window for more than a day
				h.wantMessages(sent...)
			}
			episode(0, tc.want)
			if tc.lift != nil {
				tc.lift(h, 40)
			}
			h.pass(tc.site, hours(40), healthyPass)
			if all, _ := h.st.Notices(context.Background()); len(all) != 0 {
				t.Fatalf("notices still open after the condition lifted: %+v", all)
			}
			episode(41, tc.want, tc.want)
		})
	}
}

func TestAStallOnAPlainSiteThatAlsoRefusedFiresOnlyNoBrowserRoute(t *testing.T) {
	t.Parallel()
	// The twice-refused break falls through to the pass's normal end: due > 0,
	// checked = 0, skip = '' — with refused > 0. A naive stall test sends
	// stall as well.
	cases := []struct {
		name string
		lane func(h *harness)
	}{
		{
			name: "every pass breaks on two refusals",
			lane: func(h *harness) { h.run("asurascans", 0, 30, refusedPass) },
		},
		{
			name: "refused passes alternate with passes skipped as refusing",
			lane: func(h *harness) {
				for x := 0.0; x < 30; x += 2 {
					h.pass("asurascans", hours(x), refusedPass)
					h.pass("asurascans", hours(x+1), refusingPass)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config{})
			tc.lane(h)
			h.wantMessages("no-browser-route asurascans")
			if _, ok := h.notice(word.Stall, "asurascans"); ok {
				t.Fatal("a stall notice was opened for a refusing Site")
			}
		})
	}
}

func TestOneDeadSidecarAcrossThreeBrowserLanesSendsExactlyOneMessage(t *testing.T) {
	t.Parallel()
	browser := []string{"comix", "kagane", "lightnovelworld"}
	h := newHarness(t, config{browser: browser})
	h.pass("comix", hours(0), unreachablePass)
	for x := 0.0; x < 30; x++ {
		h.pass("comix", hours(x+0.1), browserDownPass)
		h.pass("kagane", hours(x+0.2), browserDownPass)
		h.pass("lightnovelworld", hours(x+0.3), noBrowserPass)
	}
	h.wantMessages("sidecar-down browser sidecar")
	if n, ok := h.notice(word.SidecarDown, ""); !ok || n.NotifiedAt.IsZero() {
		t.Fatalf("sidecar-down notice: %+v present=%v, want one sent row with site ''", n, ok)
	}
}

func TestTheseSendNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		browser []string
		lane    func(h *harness)
	}{
		{
			name: "a pause the owner set",
			lane: func(h *harness) {
				h.run("asurascans", 0, 6, stallPass)
				h.run("asurascans", 6, 40, pausedPass)
			},
		},
		{
			name: "a pause in the middle of a stall ends the run",
			lane: func(h *harness) {
				h.run("asurascans", 0, 11, stallPass)
				h.pass("asurascans", hours(11), pausedPass)
				h.run("asurascans", 12, 23, stallPass)
			},
		},
		{
			name:    "a browser Site's refusal",
			browser: []string{"comix", "kagane"},
			lane: func(h *harness) {
				h.pass("comix", hours(0), refusedPass)
				h.run("comix", 1, 40, refusingPass)
			},
		},
		{
			name: "a single failing Series",
			lane: func(h *harness) {
				h.series("novelfull", 4)
				h.failing("novelfull", 1, "no_chapter", hours(-100))
				h.run("novelfull", 0, 30, pass{due: 4, checked: 4, ok: 3, noChapter: 1})
			},
		},
		{
			name: "most Series failing with a word other than no_chapter",
			lane: func(h *harness) {
				h.series("novelfull", 4)
				h.failing("novelfull", 4, "not_found", hours(-100))
				h.run("novelfull", 0, 30, pass{due: 4, checked: 4, notFound: 4})
			},
		},
		{
			name: "a Lane with nothing due",
			lane: func(h *harness) { h.run("kagane", 0, 40, idlePass) },
		},
		{
			name: "a plain Site reading some pages while refused on others",
			lane: func(h *harness) { h.run("asurascans", 0, 40, pass{due: 3, checked: 1, ok: 1, refused: 2}) },
		},
		{
			name:    "a browser Lane that reaches the sidecar between losses",
			browser: []string{"comix", "kagane"},
			lane: func(h *harness) {
				for x := 0.0; x < 40; x++ {
					h.pass("comix", hours(x), browserDownPass)
					if int(x)%10 == 9 {
						h.pass("kagane", hours(x+0.5), pass{due: 1, checked: 1, refused: 0, errs: 1})
					}
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config{browser: tc.browser})
			tc.lane(h)
			h.wantMessages()
			if all, _ := h.st.Notices(context.Background()); len(all) != 0 {
				t.Fatalf("open notices: %+v", all)
			}
		})
	}
}

func TestTheAdapterBrokenShareFiresAboveHalfAndNotAtHalf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name            string
		series, failing int
		finished        int // of the failing ones, this many are Finished
		want            bool
	}{
		{name: "three of four fires", series: 4, failing: 3, want: true},
		{name: "exactly two of four does not", series: 4, failing: 2, want: false},
		{name: "one of one fires", series: 1, failing: 1, want: true},
		{name: "three of four with one Finished is two of three and fires", series: 4, failing: 3, finished: 1, want: true},
		{name: "two of four with one Finished is one of three and does not", series: 4, failing: 2, finished: 1, want: false},
		{name: "no Series does not", series: 0, failing: 0, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config{})
			h.series("kagane", tc.series)
			h.failing("kagane", tc.failing, "no_chapter", hours(0))
			for i := range tc.finished {
				if _, err := h.st.Pool().Exec(context.Background(),
					`UPDATE series SET finished_at = timestamptz 'epoch' + interval '1 millisecond' WHERE site = 'kagane' AND series_id = $1`, "s"+string(rune('0'+i))); err != nil {
					t.Fatal(err)
				}
			}
			h.run("kagane", 0, 14, healthyPass)
			if tc.want {
				h.wantMessages("adapter-broken kagane")
			} else {
				h.wantMessages()
			}
		})
	}
}

func TestAFailedSendLeavesTheNoticeUnsentAndTheNextPassRetries(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config{reply: func(n int, w http.ResponseWriter, _ *http.Request) bool {
		if n == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return false
		}
		w.WriteHeader(http.StatusNoContent)
		return true
	}})
	h.run("asurascans", 0, 13, stallPass)
	h.pass("asurascans", hours(13), stallPass)
	n, ok := h.notice(word.Stall, "asurascans")
	if !ok || !n.NotifiedAt.IsZero() || n.Attempts != 1 || n.LastError != "Discord answered 500" {
		t.Fatalf("after a 500: %+v present=%v; want open, unsent, one attempt", n, ok)
	}
	h.pass("asurascans", hours(14), stallPass)
	n, _ = h.notice(word.Stall, "asurascans")
	if !n.NotifiedAt.Equal(hours(14)) || n.Attempts != 0 {
		t.Fatalf("after the retry: %+v; want sent at the pass time, attempts cleared", n)
	}
	h.run("asurascans", 15, 30, stallPass)
	if req, acc := h.sink.counts(); req != 2 || acc != 1 {
		t.Fatalf("requests %d accepted %d; want 2 and 1", req, acc)
	}
}

func TestTwoNotifiersOnOneDatabaseSendOneMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config{reply: func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		time.Sleep(150 * time.Millisecond) // keep the first claim open while the others try
		w.WriteHeader(http.StatusNoContent)
		return true
	}})
	other := h.notifier(h.sink.url(), config{})
	for x := 0.0; x < 13; x++ {
		h.insertPass("asurascans", hours(x), stallPass)
	}
	var wg sync.WaitGroup
	for i := range 6 {
		n := h.n
		if i%2 == 1 {
			n = other
		}
		wg.Go(func() {
			if err := n.Check(context.Background(), "asurascans", hours(12.5)); err != nil {
				t.Errorf("check: %v", err)
			}
		})
	}
	wg.Wait()
	for _, n := range []*notify.Notifier{h.n, other, h.n} {
		if err := n.Check(context.Background(), "asurascans", hours(12.6)); err != nil {
			t.Fatal(err)
		}
	}
	if req, acc := h.sink.counts(); req != 1 || acc != 1 {
		t.Fatalf("requests %d accepted %d; want exactly one message", req, acc)
	}
}

func TestConditionsReadsWhatThePushReads(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config{browser: []string{"comix", "kagane"}})
	h.run("asurascans", 0, 20, stallPass)   // stall since 0h
	h.run("novelfull", 2, 20, refusingPass) // no-browser-route since 2h
	h.run("comix", 3, 20, browserDownPass)  // sidecar-down since 3h
	h.series("demonicscans", 2)             //
	h.failing("demonicscans", 2, "no_chapter", hours(4))
	h.run("comix", 20, 21, refusingPass) // a browser Site's refusal: ignored by all four
	got, err := h.n.Conditions(context.Background(), hours(20))
	if err != nil {
		t.Fatal(err)
	}
	want := []notify.Condition{
		{Kind: word.Stall, Site: "asurascans", Since: hours(0)},
		{Kind: word.NoBrowserRoute, Site: "novelfull", Since: hours(2)},
		{Kind: word.SidecarDown, Site: "", Since: hours(3)},
		{Kind: word.AdapterBroken, Site: "demonicscans", Since: hours(4)},
	}
	if len(got) != len(want) {
		t.Fatalf("conditions: got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Kind != want[i].Kind || got[i].Site != want[i].Site || !got[i].Since.Equal(want[i].Since) {
			t.Fatalf("condition %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if a := got[0].Age(hours(20)); a != 20*time.Hour {
		t.Fatalf("stall age %s, want 20h", a)
	}
}

// A Lane nobody leads writes no pass at all: its last passes may read
// healthy, and the not-leader passes of the replicas that find it held are
// no pass of it. Its stall runs from the end of its last lease (its age read
// on the database's clock, the lease's own), is told by the passes of the
// other Lanes, and reads the same on the verdict line (ADR 0018; issue 22,
// item 8).
func TestALaneNobodyLeadsStallsFromTheEndOfItsLastLease(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config{})
	ctx := context.Background()
	h.pass("asurascans", hours(0), healthyPass)
	storetest.Insert(t, h.st.Pool(), storetest.Pass{Site: word.Asurascans, StartedAt: hours(0.5), FinishedAt: hours(0.5), Skip: word.SkipNotLeader})
	lease := func(ago string) {
		t.Helper()
		if _, err := h.st.Pool().Exec(ctx, `INSERT INTO lane_leases (site, holder, expires_at, pace_s)
			VALUES ('asurascans', 'a vanished host', now() - $1::interval, 3600)
			ON CONFLICT (site) DO UPDATE SET expires_at = excluded.expires_at`, ago); err != nil {
			t.Fatal(err)
		}
	}
	lease("11 hours 59 minutes")
	h.run("novelfull", 1, 3, healthyPass)
	h.wantMessages()
	lease("12 hours 1 minute")
	h.run("novelfull", 3, 5, healthyPass)
	h.wantMessages("stall asurascans")
	got, err := h.n.Conditions(ctx, hours(5))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Kind != word.Stall || got[0].Site != "asurascans" {
		t.Fatalf("conditions: %+v; want asurascans stalled", got)
	}
	if a := got[0].Age(hours(5)); a < 12*time.Hour || a > 12*time.Hour+2*time.Minute {
		t.Fatalf("stall age %v, want the 12 h 1 min since the lease ended", a)
	}
	// A process leads the Lane again: its own pass closes the notice.
	if _, err := h.st.Pool().Exec(ctx, `UPDATE lane_leases SET expires_at = now() + interval '30 seconds'`); err != nil {
		t.Fatal(err)
	}
	h.pass("asurascans", hours(5), healthyPass)
	if all, _ := h.st.Notices(ctx); len(all) != 0 {
		t.Fatalf("notices still open once the Lane is led again: %+v", all)
	}
}

func TestPassesAnotherReplicaSkippedAsNotLeaderDoNotEndARun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config{})
	for x := 0.0; x < 20; x++ {
		h.pass("asurascans", hours(x), stallPass)
		h.insertPass("asurascans", hours(x+0.5), pass{skip: "not-leader"})
	}
	h.wantMessages("stall asurascans")
}

func TestGivingARefusingSiteABrowserRouteClosesItsNotice(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config{})
	h.run("novelfull", 0, 20, refusingPass)
	h.wantMessages("no-browser-route novelfull")
	h.n = h.notifier(h.sink.url(), config{browser: []string{"novelfull"}}) // the deploy
	h.pass("novelfull", hours(20), refusingPass)
	if _, ok := h.notice(word.NoBrowserRoute, "novelfull"); ok {
		t.Fatal("the no-browser-route notice outlived the repair")
	}
	h.run("novelfull", 21, 40, refusingPass)
	h.wantMessages("no-browser-route novelfull") // a browser Site's refusal sends nothing
}

func TestALaneWhosePassBeganBeforeTheWindowEdgeDoesNotReopenASentEpisode(t *testing.T) {
	t.Parallel()
	// Every Lane evaluates at its own pass start. A browser Lane whose pass
	// began just before the 12-hour mark (a Poll waiting on the dead
	// sidecar) finishes after a sibling has already sent sidecar-down; it
	// sees the same run as not yet past the window. Closing the notice then
	// would make the sibling's next pass send the same episode again.
	h := newHarness(t, config{browser: []string{"comix", "kagane"}})
	h.run("comix", 0, 12, browserDownPass)
	h.pass("kagane", hours(12.01), browserDownPass)
	h.wantMessages("sidecar-down browser sidecar")
	h.pass("comix", hours(11.995), unreachablePass) // the slow pass, logged last
	h.run("kagane", 13, 20, browserDownPass)
	h.wantMessages("sidecar-down browser sidecar")
}

func TestANoticeLeftOpenFromAnEarlierEpisodeClosesAndTheNextEpisodeSends(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config{})
	h.run("asurascans", 0, 14, stallPass)
	h.wantMessages("stall asurascans")
	// The pass that ended the stall could not run its deferred call (the
	// database blinked), so nothing closed the notice.
	h.insertPass("asurascans", hours(14), healthyPass)
	h.run("asurascans", 15, 29, stallPass)
	h.wantMessages("stall asurascans", "stall asurascans")
}

// noticeStatements counts what Check sends about owner_notices rows beyond
// the one read of the open notices: opens, closes, claims, and the webhook
// state read before a claim.
type noticeStatements struct {
	*store.Store
	n atomic.Int64
}

func (s *noticeStatements) OpenNotice(ctx context.Context, kind word.NoticeKind, site string) error {
	s.n.Add(1)
	return s.Store.OpenNotice(ctx, kind, site)
}

func (s *noticeStatements) CloseNotice(ctx context.Context, kind word.NoticeKind, site string, runSince time.Time) error {
	s.n.Add(1)
	return s.Store.CloseNotice(ctx, kind, site, runSince)
}

func (s *noticeStatements) ClaimNotice(ctx context.Context, kind word.NoticeKind, site, by string, at, passAt time.Time) (bool, error) {
	s.n.Add(1)
	return s.Store.ClaimNotice(ctx, kind, site, by, at, passAt)
}

func (s *noticeStatements) RecordDelivery(ctx context.Context, kind word.NoticeKind, site, by string, d store.Delivery) error {
	s.n.Add(1)
	return s.Store.RecordDelivery(ctx, kind, site, by, d)
}

func (s *noticeStatements) SettleStaleClaim(ctx context.Context, kind word.NoticeKind, site string, olderThan time.Time) (string, time.Time, bool, error) {
	s.n.Add(1)
	return s.Store.SettleStaleClaim(ctx, kind, site, olderThan)
}

func (s *noticeStatements) WebhookDeadAt(ctx context.Context, urlHash string) (time.Time, error) {
	s.n.Add(1)
	return s.Store.WebhookDeadAt(ctx, urlHash)
}

func TestAHealthyPassAndANoticeAlreadySentCostNoNoticeStatements(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config{})
	counted := &noticeStatements{Store: h.st}
	n, err := notify.New(notify.Options{Store: counted, WebhookURL: h.sink.url(), HTTPClient: &http.Client{Timeout: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	h.n = n
	h.series("asurascans", 2)
	h.run("asurascans", 0, 14, healthyPass)
	if got := counted.n.Load(); got != 0 {
		t.Errorf("fourteen healthy passes sent %d notice statements, want none", got)
	}
	h.run("novelfull", 0, 14, stallPass)
	h.wantMessages("stall novelfull")
	sent := counted.n.Load()
	h.run("novelfull", 14, 20, stallPass)
	if got := counted.n.Load() - sent; got != 0 {
		t.Errorf("six passes after the notice was sent sent %d notice statements, want none", got)
	}
	h.wantMessages("stall novelfull")
	h.pass("novelfull", hours(20), healthyPass)
	if _, open := h.notice(word.Stall, "novelfull"); open {
		t.Error("the stall notice did not close when the stall ended")
	}
}
