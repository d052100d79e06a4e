package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/storetest"
	"github.com/mangabookmark/mangabookmark/word"
)

// statementLog counts what the server sends PostgreSQL: every statement,
// and every round trip (a lone statement, or one batch of them).
type statementLog struct {
	mu         sync.Mutex
	statements int
	roundTrips int
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.statements++
	l.roundTrips++
	return ctx
}

func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (l *statementLog) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roundTrips++
	return ctx
}

func (l *statementLog) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.statements++
}

func (l *statementLog) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (l *statementLog) read() (int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.statements, l.roundTrips
}

// TestEveryAdminPageRunsAFixedFewStatements counts the statements and round
// trips of each owner page, session read included, before and after the
// table grows by 3 000 Series: the landing page at most 4 statements (the
// session, its figures with the verdict's young facts, the freshness figure
// and the failing line in one, the conditions, the webhook's state), a list page (each
// filter, with a Site and a kind, a deep keyset page, the htmx fragment) at
// most 3, each in at most 2 round trips, and the same number at both sizes.
// The Lanes page and a Lane's live row are 9 statements in 2 round trips —
// the session, then one batch of the Lanes, their freshness (the Arrivals
// and the oldest reads), their pass strips, their failing lists, the conditions and the open notices — however many
// notices are open (two here, each once read by a statement of its own).
func TestEveryAdminPageRunsAFixedFewStatements(t *testing.T) {
	t.Parallel()
	log := &statementLog{}
	h := newHarnessOn(t, storetest.Pool(t, func(c *pgxpool.Config) { c.ConnConfig.Tracer = log }))
	h.seed(dataset)
	storetest.Insert(t, h.pool, storetest.Notice{Kind: word.Stall, Site: "asurascans", NotifiedAt: storetest.Milli(1)},
		storetest.Notice{Kind: word.SidecarDown})
	c := h.owner()
	type page struct {
		path       string
		headers    []string
		statements int
		roundTrips int
	}
	// The Lanes page's eighth statement is the Reader announcements' line
	// (counts and the Readers' webhook state in one read), its ninth the
	// pass strips.
	pages := []page{{"/admin", nil, 4, 2}, {"/admin/lanes", nil, 9, 2}, {"/admin/lanes/comix", []string{"HX-Request", "true"}, 9, 2},
		{"/admin/series/asurascans/failing-3mo", nil, 5, 2}}
	for _, f := range store.Filters {
		base := "/admin/series?filter=" + string(f)
		pages = append(pages,
			page{base, nil, 3, 2},
			page{base + "&site=kagane&kind=manga", nil, 3, 2},
			page{base + "&after=comix:b", nil, 3, 2},
			page{base, []string{"HX-Request", "true"}, 3, 2})
	}
	measure := func() map[string][2]int {
		out := map[string][2]int{}
		for _, p := range pages {
			h.get(c, p.path, p.headers...) // the first use of a statement on a connection prepares it
			s0, r0 := log.read()
			if a := h.get(c, p.path, p.headers...); a.status != http.StatusOK {
				t.Fatalf("%s: %d", p.path, a.status)
			}
			s1, r1 := log.read()
			key := fmt.Sprint(p.path, p.headers)
			out[key] = [2]int{s1 - s0, r1 - r0}
			if testing.Verbose() {
				t.Logf("%s: %d statements, %d round trips", key, s1-s0, r1-r0)
			}
			if s1-s0 > p.statements || r1-r0 > p.roundTrips {
				t.Errorf("%s: %d statements in %d round trips, want at most %d in %d", key, s1-s0, r1-r0, p.statements, p.roundTrips)
			}
		}
		return out
	}
	small := measure()
	grow := make([]storetest.Series, 3000)
	for i := range grow {
		id := "grow" + strconv.Itoa(i+1)
		grow[i] = storetest.Series{Site: word.Kagane, ID: id, URL: "https://kagane.org/series/" + id, Kind: word.Manga}
	}
	storetest.Insert(t, h.pool, grow...)
	large := measure()
	for k, v := range small {
		if large[k] != v {
			t.Errorf("%s: %v statements and round trips at one size, %v at another", k, v, large[k])
		}
	}
	if v := small["/admin[]"]; v[1] > 2 {
		t.Errorf("/admin: %d round trips, want 2 (the session, then one batch)", v[1])
	}
}

// TestTheRequestLogLineSaysWhatThePageSentPostgreSQL reads the server's own
// request log line for /admin: its statements and round trips, as the
// tracer counted them (make bench reads these lines).
func TestTheRequestLogLineSaysWhatThePageSentPostgreSQL(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.owner()
	h.get(c, "/admin")
	h.get(c, "/admin")
	lines := strings.Split(h.logs.String(), "\n")
	var last string
	for _, l := range lines {
		if strings.Contains(l, "msg=request") && strings.Contains(l, "route=/admin ") {
			last = l
		}
	}
	// The session, the figures (with the Series failing for less than
	// ownerWindow, the freshness figure and the failing line) and the
	// conditions.
	if !strings.Contains(last, " statements=3 ") || !strings.Contains(last, " round_trips=2 ") || !strings.Contains(last, " sql=") {
		t.Errorf("the request line does not carry the page's statements: %q", last)
	}
}
