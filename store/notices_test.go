package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

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
	if ok, err := s.ClaimNotice(ctx, "stall", "comix", "a", storetest.Milli(1), storetest.Milli(1)); ok || err != nil {
		t.Fatalf("claiming a notice that is not open: %v %v", ok, err)
	}
	if err := s.OpenNotice(ctx, "stall", "comix"); err != nil {
		t.Fatal(err)
	}
	if err := s.OpenNotice(ctx, "stall", "comix"); err != nil {
		t.Fatalf("opening twice is the lock, not an error: %v", err)
	}
	if ok, err := s.ClaimNotice(ctx, "stall", "comix", "a", storetest.Milli(1), storetest.Milli(1)); !ok || err != nil {
		t.Fatalf("first claim: %v %v", ok, err)
	}
	// The claim is a committed row: another process sees it and stays out.
	if ok, err := s.ClaimNotice(ctx, "stall", "comix", "b", storetest.Milli(2), storetest.Milli(2)); ok || err != nil {
		t.Fatalf("second claim while the first holds it: %v %v", ok, err)
	}
	all, _ := s.Notices(ctx)
	if len(all) != 1 || all[0].ClaimedBy != "a" || !all[0].ClaimedAt.Equal(storetest.Milli(1)) {
		t.Fatalf("the claim names its holder and time: %+v", all)
	}
	// An answer from a process that does not hold the claim writes nothing.
	if err := s.RecordDelivery(ctx, "stall", "comix", "b", store.Delivery{SentAt: storetest.Milli(3)}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordDelivery(ctx, "stall", "comix", "a", store.Delivery{AttemptAt: storetest.Milli(5), Err: "Discord answered 500", RetryNotBefore: storetest.Milli(50)}); err != nil {
		t.Fatal(err)
	}
	all, _ = s.Notices(ctx)
	if len(all) != 1 || !all[0].NotifiedAt.IsZero() || all[0].Attempts != 1 || all[0].LastError != "Discord answered 500" || all[0].ClaimedBy != "" {
		t.Fatalf("after one failed attempt: %+v", all)
	}
	if ok, _ := s.ClaimNotice(ctx, "stall", "comix", "b", storetest.Milli(6), storetest.Milli(49)); ok {
		t.Fatal("claimed before the retry time")
	}
	if ok, err := s.ClaimNotice(ctx, "stall", "comix", "b", storetest.Milli(6), storetest.Milli(50)); !ok || err != nil {
		t.Fatalf("claim at the retry time: %v %v", ok, err)
	}
	if err := s.RecordDelivery(ctx, "stall", "comix", "b", store.Delivery{SentAt: storetest.Milli(9)}); err != nil {
		t.Fatal(err)
	}
	all, _ = s.Notices(ctx)
	if len(all) != 1 || !all[0].NotifiedAt.Equal(storetest.Milli(9)) || all[0].Attempts != 0 || all[0].ClaimedBy != "" {
		t.Fatalf("after the send: %+v", all)
	}
	if ok, _ := s.ClaimNotice(ctx, "stall", "comix", "c", storetest.Milli(10), storetest.Milli(10)); ok {
		t.Fatal("claimed a notice already sent")
	}
}

func TestAStaleClaimIsSettledAsSentAndItsLateAnswerWritesNothing(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	if err := s.OpenNotice(ctx, "adapter-broken", "kagane"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.ClaimNotice(ctx, "adapter-broken", "kagane", "crashed", storetest.Milli(100), storetest.Milli(100)); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, _, ok, err := s.SettleStaleClaim(ctx, "adapter-broken", "kagane", storetest.Milli(100)); ok || err != nil {
		t.Fatalf("a claim not older than the bound was settled: %v %v", ok, err)
	}
	by, at, ok, err := s.SettleStaleClaim(ctx, "adapter-broken", "kagane", storetest.Milli(101))
	if !ok || err != nil || by != "crashed" || !at.Equal(storetest.Milli(100)) {
		t.Fatalf("settle: %q %v %v %v", by, at, ok, err)
	}
	if err := s.RecordDelivery(ctx, "adapter-broken", "kagane", "crashed", store.Delivery{AttemptAt: storetest.Milli(200), Err: "late"}); err != nil {
		t.Fatal(err)
	}
	all, _ := s.Notices(ctx)
	if len(all) != 1 || !all[0].NotifiedAt.Equal(storetest.Milli(100)) || all[0].Attempts != 0 || all[0].ClaimedBy != "" || !all[0].SentUnknown {
		t.Fatalf("a settled claim counts as sent at its time, maybe not arrived, and a late answer changes nothing: %+v", all)
	}
}

func TestClosingANoticeTakesItsAttemptsAndClaimWithIt(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	if err := s.OpenNotice(ctx, "sidecar-down", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimNotice(ctx, "sidecar-down", "", "a", storetest.Milli(1), storetest.Milli(1)); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordDelivery(ctx, "sidecar-down", "", "a", store.Delivery{AttemptAt: storetest.Milli(1), Err: "Discord answered 429", RetryNotBefore: storetest.Milli(100)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimNotice(ctx, "sidecar-down", "", "b", storetest.Milli(200), storetest.Milli(200)); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseNotice(ctx, "sidecar-down", "", time.Time{}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM owner_notice_attempts) + (SELECT count(*) FROM owner_notice_claims)`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("attempts and claims left after close: %d %v", n, err)
	}
	if err := s.OpenNotice(ctx, "sidecar-down", ""); err != nil {
		t.Fatal(err)
	}
	all, _ := s.Notices(ctx)
	if len(all) != 1 || all[0].Attempts != 0 || !all[0].RetryNotBefore.IsZero() || all[0].ClaimedBy != "" {
		t.Fatalf("a new episode starts clean: %+v", all)
	}
}

func TestADeadWebhookIsRememberedByTheHashOfItsAddress(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	if at, err := s.WebhookDeadAt(ctx, "aa"); !at.IsZero() || err != nil {
		t.Fatalf("unknown webhook: %v %v", at, err)
	}
	for _, at := range []int64{7, 8} {
		if err := s.MarkWebhookDead(ctx, "aa", storetest.Milli(at)); err != nil {
			t.Fatal(err)
		}
	}
	if at, err := s.WebhookDeadAt(ctx, "aa"); !at.Equal(storetest.Milli(7)) || err != nil {
		t.Fatalf("dead webhook: %v %v; want the first 404's time", at, err)
	}
	if at, _ := s.WebhookDeadAt(ctx, "bb"); !at.IsZero() {
		t.Fatal("another address is another setting")
	}
}
