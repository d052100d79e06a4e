package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

func TestAReaderChannelFailingForTwelveHoursIsListed(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	storetest.Insert(t, s.Pool(), storetest.Reader{ID: "111"})
	storetest.Insert(t, s.Pool(), storetest.Series{Site: "comix", ID: "s1", LatestChapter: "100", CheckedAt: t0})
	storetest.Insert(t, s.Pool(), storetest.Bookmark{Reader: "111", Site: "comix", Series: "s1", Progress: "99"})
	storetest.Insert(t, s.Pool(), storetest.ReaderSettings{Reader: "111", Discord: true})
	storetest.Insert(t, s.Pool(), storetest.Arrival{Site: "comix", Series: "s1", Chapter: "100", ConfirmedAt: t0})
	if n, err := s.RecordAnnouncements(ctx, "comix", t0.Add(-time.Hour), t0, true); n != 1 || err != nil {
		t.Fatalf("recorded %d, %v", n, err)
	}
	if n, _ := s.RecordAnnouncements(ctx, "comix", t0.Add(-time.Hour), t0.Add(time.Minute), true); n != 0 {
		t.Fatalf("a second decision recorded %d more", n)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE announcements SET failed_at = $1, attempts = 3, last_error = 'Discord answered 500'`, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.FailingChannels(ctx, t0.Add(-time.Minute)); err != nil || len(got) != 0 {
		t.Fatalf("failing for less than the span: %+v %v", got, err)
	}
	got, err := s.FailingChannels(ctx, t0.Add(time.Minute))
	if err != nil || len(got) != 1 || got[0].Channel != word.ChannelDiscord || !got[0].Since.Equal(t0) {
		t.Fatalf("failing channels %+v %v", got, err)
	}
	counts, err := s.DeliveryCounts(ctx, t0, "")
	if err != nil || len(counts) != 2 || counts[0].Channel != word.ChannelDiscord || counts[0].Failed != 1 || counts[0].Sent != 0 {
		t.Fatalf("counts %+v %v", counts, err)
	}
}

// TestTheAnnouncementPlans holds each statement to its index on a database
// with years of sent announcements.
func TestTheAnnouncementPlans(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	pool := s.Pool()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, q := range []string{
		`INSERT INTO readers (discord_id, created_at) SELECT g::text, now() FROM generate_series(1, 200) g`,
		`INSERT INTO reader_settings (reader_id, discord, updated_at) SELECT discord_id, true, now() FROM readers`,
		`INSERT INTO series (site, series_id, url, title, kind, created_at)
		   SELECT 'comix', 's' || g, 'https://x/' || g, 't', 'manga', now() FROM generate_series(1, 5000) g`,
		`INSERT INTO bookmarks (reader_id, site, series_id, progress_num, created_at, updated_at)
		   SELECT (1 + (g + r * 50) % 200)::text, 'comix', 's' || g, 1, now(), now()
		   FROM generate_series(1, 5000) g, generate_series(0, 3) r`,
		`INSERT INTO chapter_arrivals (site, series_id, chapter_num, confirmed_at, noticed_at)
		   SELECT 'comix', 's' || (1 + g % 5000), g, $1::timestamptz - g * interval '10 minutes', $1::timestamptz - g * interval '10 minutes'
		   FROM generate_series(1, 10000) g`,
		`INSERT INTO announcements (reader_id, channel, site, series_id, chapter_num, arrival_id, created_at, sent_at)
		   SELECT b.reader_id, 'discord', a.site, a.series_id, a.chapter_num, a.id, a.confirmed_at, a.confirmed_at
		   FROM chapter_arrivals a JOIN bookmarks b ON b.site = a.site AND b.series_id = a.series_id`,
		`ANALYZE`,
	} {
		var args []any
		if strings.Contains(q, "$1") {
			args = []any{t0}
		}
		if _, err := pool.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	noKeys := []string{}
	args := map[string][]any{
		"record":  {"comix", t0.Add(-24 * time.Hour), t0, true},
		"unsent":  {"comix", "discord"},
		"claim":   {"discord", "comix", noKeys, noKeys, noKeys, t0},
		"sent":    {"discord", "comix", noKeys, noKeys, noKeys, t0, t0},
		"failed":  {"discord", "comix", noKeys, noKeys, noKeys, t0, t0, "x"},
		"unknown": {"discord", "comix", noKeys, noKeys, noKeys, t0, t0, "x"},
		"settle":  {"discord", "comix", t0},
		"moot":    {"discord", "comix"},
		"counts":  {t0.Add(-24 * time.Hour), t0.Add(-48 * time.Hour), "h"},
		"failing": {t0, []string{"discord", "push"}},
	}
	for name, sql := range store.AnnounceStatements {
		rows, err := pool.Query(ctx, "EXPLAIN "+sql, args[name]...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		for _, table := range []string{"announcements", "chapter_arrivals", "bookmarks", "series"} {
			if strings.Contains(plan, "Seq Scan on "+table) {
				t.Errorf("%s scans %s:\n%s", name, table, plan)
			}
		}
	}
}

// announceWorld seeds one Discord Reader behind on comix/s1 and the
// Arrival of chapter 100 that owes them an announcement, recorded at t0.
func announceWorld(t *testing.T, s *store.Store, t0 time.Time) store.AnnouncementKey {
	t.Helper()
	storetest.Insert(t, s.Pool(), storetest.Reader{ID: "111"})
	storetest.Insert(t, s.Pool(), storetest.Series{Site: "comix", ID: "s1", LatestChapter: "100", CheckedAt: t0})
	storetest.Insert(t, s.Pool(), storetest.Bookmark{Reader: "111", Site: "comix", Series: "s1", Progress: "99"})
	storetest.Insert(t, s.Pool(), storetest.ReaderSettings{Reader: "111", Discord: true})
	storetest.Insert(t, s.Pool(), storetest.Arrival{Site: "comix", Series: "s1", Chapter: "100", ConfirmedAt: t0})
	if n, err := s.RecordAnnouncements(context.Background(), "comix", t0.Add(-time.Hour), t0, true); n != 1 || err != nil {
		t.Fatalf("recorded %d, %v", n, err)
	}
	return store.AnnouncementKey{ReaderID: "111", SeriesID: "s1", Chapter: "100"}
}

// TestAnAnnouncementIsClaimedByOneProcessAtATime walks one row through
// claim, send and record in turn, so each guard of the claim is seen to
// hold without a race: a row claimed by one process, or already sent, is
// never claimed again (docs/adr/0017).
func TestAnAnnouncementIsClaimedByOneProcessAtATime(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	key := announceWorld(t, s, t0)
	keys := []store.AnnouncementKey{key}
	claim := func(at time.Time) int {
		t.Helper()
		won, err := s.ClaimAnnouncements(ctx, word.ChannelDiscord, "comix", keys, at)
		if err != nil {
			t.Fatal(err)
		}
		return len(won)
	}
	if n := claim(t0.Add(time.Second)); n != 1 {
		t.Fatalf("the first claim won %d rows, want 1", n)
	}
	// The claim is committed: another process's claim finds it and stays out.
	if n := claim(t0.Add(2 * time.Second)); n != 0 {
		t.Fatalf("a second claim while the first holds the row won %d, want 0", n)
	}
	// An answer from a process that does not hold the claim writes nothing.
	if err := s.RecordAnnounced(ctx, word.ChannelDiscord, "comix", t0.Add(2*time.Second),
		store.AnnounceResult{Keys: keys, At: t0.Add(3 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	var sent, claimed *time.Time
	row := func() {
		t.Helper()
		if err := s.Pool().QueryRow(ctx, `SELECT sent_at, claimed_at FROM announcements`).Scan(&sent, &claimed); err != nil {
			t.Fatal(err)
		}
	}
	if row(); sent != nil || claimed == nil || !claimed.Equal(t0.Add(time.Second)) {
		t.Fatalf("after another process's answer: sent %v, claimed %v; want still claimed by the first", sent, claimed)
	}
	if err := s.RecordAnnounced(ctx, word.ChannelDiscord, "comix", t0.Add(time.Second),
		store.AnnounceResult{Keys: keys, At: t0.Add(4 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	if row(); sent == nil || !sent.Equal(t0.Add(4*time.Second)) || claimed != nil {
		t.Fatalf("after the holder's answer: sent %v, claimed %v", sent, claimed)
	}
	// Sent is for good: no later claim takes the row again.
	if n := claim(t0.Add(5 * time.Second)); n != 0 {
		t.Fatalf("a claim after the send won %d rows, want 0", n)
	}
	if rows, err := s.UnsentAnnouncements(ctx, "comix", word.ChannelDiscord); err != nil || len(rows) != 0 {
		t.Fatalf("a sent row is listed as unsent: %+v %v", rows, err)
	}
}
