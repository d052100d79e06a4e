package store_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
)

// A claim left in flight past the request's budget (the database went away
// before it could be given back) is taken over by one retry of the same
// request, never by two at once, never by another request, and the late
// first request can neither answer nor free the retry's claim.
func TestAnAbandonedClaimIsTakenOverByExactlyOneRetry(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	abandonedBefore := now.Add(-20 * time.Second)
	hash := []byte("the request")
	storetest.Insert(t, s.Pool(), storetest.Reader{ID: "r1", Name: "One", CreatedAt: now.Add(-time.Hour)})
	storetest.Insert(t, s.Pool(),
		storetest.Idempotency{Reader: "r1", Key: "fresh", RequestHash: hash, CreatedAt: now.Add(-5 * time.Second)},
		storetest.Idempotency{Reader: "r1", Key: "abandoned", RequestHash: hash, CreatedAt: now.Add(-time.Minute)},
		storetest.Idempotency{Reader: "r1", Key: "another body", RequestHash: []byte("another"), CreatedAt: now.Add(-time.Minute)},
		storetest.Idempotency{Reader: "r1", Key: "answered", RequestHash: hash, Status: 200, CreatedAt: now.Add(-time.Minute)},
	)
	for _, key := range []string{"fresh", "another body", "answered"} {
		if _, err := s.ClaimIdempotencyKey(ctx, "r1", key, hash, now, abandonedBefore); !errors.Is(err, store.ErrKeyTaken) {
			t.Errorf("%s: claimed (%v); want ErrKeyTaken", key, err)
		}
	}
	if r, _ := s.ClaimIdempotencyKey(ctx, "r1", "fresh", hash, now, abandonedBefore); r.Status != 0 || !r.ClaimedAt.Equal(now.Add(-5*time.Second)) {
		t.Errorf("the fresh claim reads %+v", r)
	}

	const racers = 8
	var wg sync.WaitGroup
	won := make(chan int, racers)
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			// Each racer's own instant, as separate requests would have.
			_, err := s.ClaimIdempotencyKey(ctx, "r1", "abandoned", hash, now.Add(time.Duration(i)*time.Millisecond), abandonedBefore)
			switch {
			case err == nil:
				won <- i
			case !errors.Is(err, store.ErrKeyTaken):
				t.Errorf("racer %d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	close(won)
	var winners []int
	for i := range won {
		winners = append(winners, i)
	}
	if len(winners) != 1 {
		t.Fatalf("%d retries took the abandoned claim over (%v); want exactly one", len(winners), winners)
	}
	claimed := now.Add(time.Duration(winners[0]) * time.Millisecond)

	// The first request, late: its release and its answer touch nothing.
	if err := s.ReleaseIdempotencyKey(ctx, "r1", "abandoned", now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishIdempotencyKey(ctx, "r1", "abandoned", now.Add(-time.Minute), 500, []byte("late"), now); err != nil {
		t.Fatal(err)
	}
	if r, err := s.ClaimIdempotencyKey(ctx, "r1", "abandoned", hash, now.Add(time.Second), abandonedBefore); !errors.Is(err, store.ErrKeyTaken) || r.Status != 0 || !r.ClaimedAt.Equal(claimed) {
		t.Fatalf("after the late first request: %+v %v; want the retry's claim in flight", r, err)
	}
	if err := s.FinishIdempotencyKey(ctx, "r1", "abandoned", claimed, 200, []byte(`{"applied":true}`), now); err != nil {
		t.Fatal(err)
	}
	if r, err := s.ClaimIdempotencyKey(ctx, "r1", "abandoned", hash, now.Add(time.Hour), now.Add(time.Hour)); !errors.Is(err, store.ErrKeyTaken) || r.Status != 200 || string(r.Response) != `{"applied":true}` {
		t.Fatalf("the retry's answer: %+v %v", r, err)
	}
}

// The key statements run on every API write: each reaches its row through
// an index on a table of many Readers' keys.
func TestTheIdempotencyPlans(t *testing.T) {
	t.Parallel()
	s := storetest.New(t)
	ctx := context.Background()
	pool := s.Pool()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	var readers []storetest.Reader
	var keys []storetest.Idempotency
	for r := range 200 {
		id := "r" + strconv.Itoa(r)
		readers = append(readers, storetest.Reader{ID: id, Name: id, CreatedAt: now})
		for k := range 50 {
			keys = append(keys, storetest.Idempotency{Reader: id, Key: "k" + strconv.Itoa(k), RequestHash: []byte{1},
				Status: 200 * (k % 2), CreatedAt: now.Add(-time.Duration(k) * time.Hour)})
		}
	}
	storetest.Insert(t, pool, readers...)
	storetest.Insert(t, pool, keys...)
	if _, err := pool.Exec(ctx, `ANALYZE api_idempotency`); err != nil {
		t.Fatal(err)
	}
	plan := func(sql string, args ...any) string {
		rows, err := pool.Query(ctx, "EXPLAIN "+sql, args...)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	cases := []struct {
		name  string
		plan  string
		needs []string
	}{
		{"the claim, a takeover included, arbitrates on the primary key",
			plan(store.ClaimKeySQL, "r7", "k3", []byte{1}, now, now.Add(-24*time.Hour), now.Add(-time.Minute)),
			[]string{"api_idempotency_pkey"}},
		// The claim's own row is one row of either index (the key, or its
		// Reader and instant): the planner may pick either.
		{"the answer is written through an index and the prune walks the age index",
			plan(store.FinishKeySQL, "r7", "k3", 200, []byte("{}"), now.Add(-24*time.Hour), now),
			[]string{"Index Scan using api_idempotency_", "on api_idempotency_age"}},
		{"the release deletes through an index",
			plan(store.ReleaseKeySQL, "r7", "k3", now),
			[]string{"Index Scan using api_idempotency_"}},
	}
	for _, c := range cases {
		for _, n := range c.needs {
			if !strings.Contains(c.plan, n) {
				t.Errorf("%s: plan lacks %s:\n%s", c.name, n, c.plan)
			}
		}
		if strings.Contains(c.plan, "Seq Scan") {
			t.Errorf("%s: sequential scan:\n%s", c.name, c.plan)
		}
	}
}
