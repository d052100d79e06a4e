package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

func TestOwnerNoticesCarriesOnlyThatTheOwnerWasTold(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	var cols []string
	rows, err := s.Pool().Query(context.Background(), `SELECT column_name FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name = 'owner_notices' ORDER BY ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	if got := strings.Join(cols, ","); got != "kind,site,notified_at" {
		t.Fatalf("owner_notices columns %s", got)
	}
}

func TestANoticeIsClaimedByOneProcessAtATime(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	if ok, err := s.ClaimNotice(ctx, "stall", "comix", func(store.NoticeState) store.Delivery {
		t.Fatal("delivered a notice that is not open")
		return store.Delivery{}
	}); ok || err != nil {
		t.Fatalf("claiming a notice that is not open: %v %v", ok, err)
	}
	if err := s.OpenNotice(ctx, "stall", "comix"); err != nil {
		t.Fatal(err)
	}
	if err := s.OpenNotice(ctx, "stall", "comix"); err != nil {
		t.Fatalf("opening twice is the lock, not an error: %v", err)
	}
	ok, err := s.ClaimNotice(ctx, "stall", "comix", func(st store.NoticeState) store.Delivery {
		// While this claim holds the row, another process's claim skips it.
		inner, err := s.ClaimNotice(ctx, "stall", "comix", func(store.NoticeState) store.Delivery {
			t.Error("a second claim delivered while the first held the row")
			return store.Delivery{Skip: true}
		})
		if inner || err != nil {
			t.Errorf("second claim: %v %v", inner, err)
		}
		return store.Delivery{AttemptAt: 5, Err: "Discord answered 500"}
	})
	if !ok || err != nil {
		t.Fatalf("first claim: %v %v", ok, err)
	}
	ok, err = s.ClaimNotice(ctx, "stall", "comix", func(st store.NoticeState) store.Delivery {
		if st.Attempts != 1 || st.LastError != "Discord answered 500" || st.NotifiedAt != 0 {
			t.Errorf("state after one failed attempt: %+v", st)
		}
		return store.Delivery{SentAt: 9}
	})
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	all, err := s.Notices(ctx)
	if err != nil || len(all) != 1 || all[0].NotifiedAt != 9 || all[0].Attempts != 0 {
		t.Fatalf("after the send: %+v %v", all, err)
	}
}

func TestClosingANoticeTakesItsAttemptsWithIt(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	if err := s.OpenNotice(ctx, "sidecar-down", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimNotice(ctx, "sidecar-down", "", func(store.NoticeState) store.Delivery {
		return store.Delivery{AttemptAt: 1, Err: "Discord answered 429", RetryNotBefore: 100}
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseNotice(ctx, "sidecar-down", "", 0); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM owner_notice_attempts`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("attempts left after close: %d %v", n, err)
	}
	if err := s.OpenNotice(ctx, "sidecar-down", ""); err != nil {
		t.Fatal(err)
	}
	all, _ := s.Notices(ctx)
	if len(all) != 1 || all[0].Attempts != 0 || all[0].RetryNotBefore != 0 {
		t.Fatalf("a new episode starts clean: %+v", all)
	}
}

func TestADeadWebhookIsRememberedByTheHashOfItsAddress(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	if at, err := s.WebhookDeadAt(ctx, "aa"); at != 0 || err != nil {
		t.Fatalf("unknown webhook: %d %v", at, err)
	}
	for _, at := range []int64{7, 8} {
		if err := s.MarkWebhookDead(ctx, "aa", at); err != nil {
			t.Fatal(err)
		}
	}
	if at, err := s.WebhookDeadAt(ctx, "aa"); at != 7 || err != nil {
		t.Fatalf("dead webhook: %d %v; want the first 404's time", at, err)
	}
	if at, _ := s.WebhookDeadAt(ctx, "bb"); at != 0 {
		t.Fatal("another address is another setting")
	}
}
