package store_test

import (
	"context"
	"testing"
	"time"

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
	counts, err := s.DeliveryCounts(ctx, t0)
	if err != nil || len(counts) != 1 || counts[0].Failed != 1 || counts[0].Sent != 0 {
		t.Fatalf("counts %+v %v", counts, err)
	}
}
