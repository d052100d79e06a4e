package handlers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// plainLanes are the Sites read over plain HTTPS in the harness.
var plainLanes = []word.Site{word.Asurascans, word.Demonicscans, word.Lightnovelworld, word.Novelfull}

// offlineRestarted is a server on a machine with no internet, three
// minutes after it started and one minute after a restart: each plain
// Lane's first pass owed its Series and reached nothing, listing and Polls
// alike; after the restart its pass found nothing due (the reads were
// stamped) and its listing unreachable again. demonicscans has no Series
// at all: only its listing ever asked the Site.
func offlineRestarted(h *harness) {
	h.t.Helper()
	for _, site := range plainLanes {
		due, counts := 1, word.Counts{Unreachable: 1}
		if site == word.Demonicscans {
			due, counts = 0, word.Counts{}
		} else {
			storetest.Insert(h.t, h.pool, storetest.Series{Site: site, ID: "s-" + string(site), URL: "https://" + string(site) + ".test/s",
				Kind: site.Kind(), CheckedAt: t0.Add(-3 * time.Minute)})
		}
		storetest.Insert(h.t, h.pool,
			storetest.Pass{Site: site, StartedAt: t0.Add(-3 * time.Minute), Due: due, Counts: counts,
				ListingPages: 1, ListingOutcome: word.Unreachable},
			storetest.Pass{Site: site, StartedAt: t0.Add(-time.Minute), ListingPages: 1, ListingOutcome: word.Unreachable})
		storetest.SetListing(h.t, h.pool, storetest.Listing{Site: site, TriedAt: t0.Add(-time.Minute),
			Outcome: word.Unreachable, FailingSince: t0.Add(-3 * time.Minute)})
	}
}

// After a restart the pages say what they said before it: every state is
// read from the database, so a fresh handler (nothing in memory) names our
// network for every plain Lane, demonicscans with no Series due included,
// with the age of the first request that reached nothing.
func TestAfterARestartTheVerdictStillNamesOurNetworkForEveryPlainLane(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withWebhook(t, "https://discord.example/api/webhooks/1/x"))
	offlineRestarted(h)
	early := squash(h.get(h.owner(), "/admin").testid("verdict-early").Text())
	if !strings.Contains(early, "4 faults began less than 12 hours ago") {
		t.Errorf("too early to tell %q: want the four plain Lanes", early)
	}
	for _, site := range plainLanes {
		want := "the " + string(site) + " Lane unable to reach "
		if !strings.Contains(early, want) || !strings.Contains(early, "for 3 minutes: check this machine's network and DNS") {
			t.Errorf("too early to tell %q does not name %s's network with its age of 3 minutes", early, site)
		}
	}
	if strings.Contains(early, "owing Polls") {
		t.Errorf("a Lane reaching nothing is also named as stalling: %q", early)
	}
}

func TestAfterARestartEachPlainLaneSaysItCannotReachItsSiteAndItsListingSinceTheFirstFailure(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withWebhook(t, "https://discord.example/api/webhooks/1/x"))
	offlineRestarted(h)
	a := h.get(h.owner(), "/admin/lanes")
	for _, site := range plainLanes {
		row := lane(a, string(site))
		if got := text(row.Find(`[data-testid="lane-state"]`)); !strings.Contains(got, "cannot reach the Site") {
			t.Errorf("%s reads %q, want cannot reach the Site", site, got)
		}
		if got := text(row.Find(`[data-testid="lane-state-note"]`)); !strings.HasPrefix(got, "For 3 minutes every request to ") {
			t.Errorf("%s's note %q: want its age from the first failure", site, got)
		}
		if got := text(row.Find(`[data-testid="lane-listing"]`)); got != "listing not reached for 3 minutes" {
			t.Errorf("%s's listing reads %q, want listing not reached for 3 minutes", site, got)
		}
		if got := text(row.Find(`[data-testid="lane-listing-cost"]`)); !strings.HasPrefix(got, "New chapters found by the Series' own pace only: about every 1 hour at this size") {
			t.Errorf("%s's listing cost reads %q", site, got)
		}
	}
}

// Each Lane states its listing's last outcome with its age, and what a
// failing one costs in reads at the Lane's size; refused past twelve hours
// it is a Lane fault on /admin (not an owner notice), and the freshness
// figure says its number comes partly from fallback reads.
func TestEachListingStatesItsLastOutcomeAndAFailingOnePastTheWindowIsALaneFault(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withWebhook(t, "https://discord.example/api/webhooks/1/x"), func(d *handlers.Deps) {
		d.Spacing = 3 * time.Second
		d.PollEvery = map[string]time.Duration{"asurascans": time.Hour}
	})
	storetest.Insert(t, h.pool, storetest.Tally{Site: word.Asurascans, Pollable: 4800})
	storetest.SetListing(t, h.pool,
		storetest.Listing{Site: word.Novelfull, TriedAt: t0.Add(-4 * time.Minute), Outcome: word.OK, Entries: 38, Marked: 2,
			ReadAt: t0.Add(-4 * time.Minute)},
		storetest.Listing{Site: word.Asurascans, TriedAt: t0.Add(-5 * time.Minute), Outcome: word.Refused,
			FailingSince: t0.Add(-50 * time.Hour), ReadAt: t0.Add(-51 * time.Hour)},
		storetest.Listing{Site: word.Demonicscans, TriedAt: t0.Add(-5 * time.Minute), Outcome: word.Unreachable,
			FailingSince: t0.Add(-3 * time.Hour)})
	a := h.get(h.owner(), "/admin/lanes")
	for site, want := range map[string]string{
		"novelfull":       "listing read 4 minutes ago: 38 entries, 2 marked",
		"asurascans":      "listing refused by the Site for 2 days, last read 2 days ago",
		"demonicscans":    "listing not reached for 3 hours",
		"lightnovelworld": "listing not read yet",
	} {
		if got := text(lane(a, site).Find(`[data-testid="lane-listing"]`)); got != want {
			t.Errorf("%s: %q, want %q", site, got, want)
		}
	}
	// 4,800 Series at one request every 3 seconds: each read every 4 hours.
	if got, want := text(lane(a, "asurascans").Find(`[data-testid="lane-listing-cost"]`)),
		"New chapters found by the Series' own pace only: about every 4 hours at this size (4800 Series)."; got != want {
		t.Errorf("asurascans' cost %q, want %q", got, want)
	}
	if n := lane(a, "novelfull").Find(`[data-testid="lane-listing-cost"]`).Length(); n != 0 {
		t.Error("a listing read states a cost")
	}
	if got := text(lane(a, "asurascans").Find(`[data-testid="lane-listing-broken"]`)); !strings.HasPrefix(got, "The asurascans listing refused by the Site for 2 days") {
		t.Errorf("asurascans' Lane fault reads %q", got)
	}

	land := h.get(h.owner(), "/admin")
	faults := land.find(`[data-testid="verdict-lane-fault"]`)
	if faults.Length() != 1 || faults.AttrOr("data-site", "") != "asurascans" {
		t.Fatalf("Lane faults on /admin: %q, want asurascans' alone", text(faults))
	}
	if got := text(faults); !strings.Contains(got, "the asurascans listing refused by the Site for 2 days: new chapters are found by the Series' own pace only (a Lane fault, not an owner notice). To fix: "+word.NoBrowserRoute.Repair("asurascans")) {
		t.Errorf("asurascans' Lane fault on /admin reads %q", got)
	}
	if land.find(`a[data-kind]`).Length() != 0 {
		t.Error("a failing listing is named as an owner notice")
	}
	if early := text(land.testid("verdict-early")); !strings.Contains(early, "the demonicscans Lane unable to reach demonicscans") {
		t.Errorf("too early to tell %q: want demonicscans' unreachable listing named as our network", early)
	}
	if got := text(land.testid("freshness-fallback")); !strings.Contains(got, "the listing of asurascans and demonicscans is not being read") {
		t.Errorf("the freshness figure's fallback line reads %q", got)
	}
}
