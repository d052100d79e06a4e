package handlers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

func TestTheLanesPageCountsReaderAnnouncementsAndSaysADeadReadersWebhookIsOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(d *handlers.Deps) { d.ReadersWebhookHash = "readers-hash" })
	storetest.Insert(t, h.pool, storetest.Reader{ID: "111"}, storetest.Reader{ID: "222"}, storetest.Reader{ID: "333"})
	storetest.Insert(t, h.pool, storetest.Series{Site: "comix", ID: "s1", LatestChapter: "101", CheckedAt: t0})
	storetest.Insert(t, h.pool, storetest.Arrival{Site: "comix", Series: "s1", Chapter: "101", ConfirmedAt: t0.Add(-time.Hour)})
	h.exec(`INSERT INTO announcements (reader_id, channel, site, series_id, chapter_num, arrival_id, created_at, sent_at, failed_at, attempts)
		SELECT r, 'discord', 'comix', 's1', 101, (SELECT id FROM chapter_arrivals), $1, s, f, a
		FROM (VALUES ('111', $2::timestamptz, NULL::timestamptz, 0), ('222', $2, NULL, 0), ('333', NULL, $2, 1)) AS v(r, s, f, a)`,
		t0.Add(-time.Hour), t0.Add(-30*time.Minute))
	storetest.Insert(t, h.pool, storetest.DeadWebhook{Hash: "readers-hash", DeadAt: t0.Add(-2 * time.Hour)})
	a := h.get(h.owner(), "/admin/lanes")
	if got := strings.TrimSpace(a.testid("announce-counts").Text()); got != "discord 2 sent · 1 failed (24 h)" {
		t.Errorf("counts %q", got)
	}
	if dead := a.testid("announce-discord-dead"); dead.Length() != 1 || !strings.Contains(dead.Text(), "2 hours") {
		t.Errorf("the dead Readers' webhook: %q", dead.Text())
	}
	if a.testid("announce-discord-off").Length() != 0 {
		t.Error("a configured webhook is not said to be unset")
	}
}

func TestTheLanesPageSaysTheReadersChannelIsOffWithoutItsWebhook(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.get(h.owner(), "/admin/lanes")
	if a.testid("announce-discord-off").Length() != 1 || strings.TrimSpace(a.testid("announce-counts").Text()) != "none in the last 24 h." {
		t.Fatalf("reader announcements section: %q", a.testid("reader-announcements").Text())
	}
}

// A message sent with no answer is counted apart, for Readers and the owner
// alike: it is not sent again, and it may not have arrived (ADR 0017, 0005).
func TestTheLanesPageCountsSendsThatMayNotHaveArrivedApart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(d *handlers.Deps) { d.ReadersWebhookHash = "readers-hash" })
	storetest.Insert(t, h.pool, storetest.Reader{ID: "111"}, storetest.Reader{ID: "222"}, storetest.Reader{ID: "333"})
	storetest.Insert(t, h.pool, storetest.Series{Site: "comix", ID: "s1", LatestChapter: "101", CheckedAt: t0})
	storetest.Insert(t, h.pool, storetest.Arrival{Site: "comix", Series: "s1", Chapter: "101", ConfirmedAt: t0.Add(-time.Hour)})
	h.exec(`INSERT INTO announcements (reader_id, channel, site, series_id, chapter_num, arrival_id, created_at, sent_at, sent_unknown, attempts)
		SELECT r, 'discord', 'comix', 's1', 101, (SELECT id FROM chapter_arrivals), $1, $2, u, 1
		FROM (VALUES ('111', false), ('222', true), ('333', true)) AS v(r, u)`,
		t0.Add(-time.Hour), t0.Add(-30*time.Minute))
	ctx := context.Background()
	if err := h.store.OpenNotice(ctx, word.Stall, "asurascans"); err != nil {
		t.Fatal(err)
	}
	if ok, err := h.store.ClaimNotice(ctx, word.Stall, "asurascans", "p", t0.Add(-2*time.Hour), t0.Add(-2*time.Hour)); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if err := h.store.RecordDelivery(ctx, word.Stall, "asurascans", "p", store.Delivery{SentAt: t0.Add(-2 * time.Hour),
		Unknown: true, Err: "Post webhook: context deadline exceeded (timed out)"}); err != nil {
		t.Fatal(err)
	}
	a := h.get(h.owner(), "/admin/lanes")
	if got := strings.TrimSpace(a.testid("announce-counts").Text()); got != "discord 1 sent · 0 failed (24 h)" {
		t.Errorf("counts %q; the two sent with no answer are not counted as sent", got)
	}
	if got := squash(a.testid("announce-unknown").Text()); !strings.Contains(got, "may not have arrived") || !strings.Contains(got, "discord 2") {
		t.Errorf("the announcements that may not have arrived: %q", got)
	}
	got := squash(a.testid("owner-notice-unknown").Text())
	if !strings.Contains(got, "sent 2 hours ago") || !strings.Contains(got, "may not have arrived") || a.testid("owner-notice-pending").Length() != 0 {
		t.Errorf("the owner notice sent with no answer reads %q", got)
	}
}
