package handlers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store/storetest"
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
