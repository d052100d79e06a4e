package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

func TestPushSubscriptions(t *testing.T) {
	t.Parallel()
	pool := storetest.Pool(t, nil)
	st := store.New(pool)
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	storetest.Insert(t, pool, storetest.Reader{ID: "ada", Name: "Ada"}, storetest.Reader{ID: "bo", Name: "Bo"})
	sub := func(reader, endpoint, key string) store.PushSubscription {
		return store.PushSubscription{ReaderID: reader, Endpoint: endpoint, P256dh: key, Auth: "auth-" + key}
	}
	endpoints := func(reader string) []string {
		t.Helper()
		l, err := st.PushSubscriptions(ctx, reader)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range l {
			out = append(out, s.Endpoint+"="+s.P256dh)
		}
		return out
	}

	for _, s := range []store.PushSubscription{sub("ada", "https://push.example/1", "k1"), sub("ada", "https://push.example/2", "k2"), sub("ada", "https://push.example/1", "k1b")} {
		if err := st.SavePushSubscription(ctx, s, now); err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprint(endpoints("ada")); got != "[https://push.example/1=k1b https://push.example/2=k2]" {
		t.Fatalf("a browser that subscribes again replaces its row: got %s", got)
	}
	// Bo posts Ada's second browser's endpoint: refused, and it stays Ada's
	// with her keys.
	if err := st.SavePushSubscription(ctx, sub("bo", "https://push.example/2", "k3"), now); !errors.Is(err, store.ErrEndpointTaken) {
		t.Fatalf("Bo saving Ada's endpoint: %v, want ErrEndpointTaken", err)
	}
	if a, b := fmt.Sprint(endpoints("ada")), fmt.Sprint(endpoints("bo")); a != "[https://push.example/1=k1b https://push.example/2=k2]" || b != "[]" {
		t.Fatalf("the endpoint stays with the Reader who holds it: ada %s, bo %s", a, b)
	}
	if err := st.UnsubscribePush(ctx, "bo", "https://push.example/2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Bo cannot unsubscribe Ada's browser: %v", err)
	}
	if err := st.UnsubscribePush(ctx, "ada", "https://push.example/2"); err != nil {
		t.Fatal(err)
	}
	// Once Ada stopped it, the browser is free for Bo.
	if err := st.SavePushSubscription(ctx, sub("bo", "https://push.example/2", "k3"), now); err != nil {
		t.Fatalf("Bo subscribing a browser nobody holds: %v", err)
	}
	if err := st.UnsubscribePush(ctx, "bo", "https://push.example/2"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeletePushSubscription(ctx, "https://push.example/1"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeletePushSubscription(ctx, "https://push.example/1"); err != nil {
		t.Fatalf("deleting a gone endpoint again is no error: %v", err)
	}
	if a, b := endpoints("ada"), endpoints("bo"); len(a)+len(b) != 0 {
		t.Fatalf("rows left: %v %v", a, b)
	}

	for i := range store.MaxPushSubscriptions {
		if err := st.SavePushSubscription(ctx, sub("ada", fmt.Sprintf("https://push.example/cap/%d", i), "k"), now); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SavePushSubscription(ctx, sub("ada", "https://push.example/cap/one-more", "k"), now); !errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrEndpointTaken) {
		t.Fatalf("a Reader at the cap cannot add another browser: %v", err)
	}
	if err := st.SavePushSubscription(ctx, sub("ada", "https://push.example/cap/3", "renewed"), now); err != nil {
		t.Fatalf("a Reader at the cap may renew one of theirs: %v", err)
	}
	if n := len(endpoints("ada")); n != store.MaxPushSubscriptions {
		t.Fatalf("ada has %d subscriptions, want %d", n, store.MaxPushSubscriptions)
	}
}
