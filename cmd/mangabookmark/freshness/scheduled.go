package freshness

import (
	"math"
	"strconv"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/poller/schedule"
	"github.com/mangabookmark/mangabookmark/word"
)

// migrationPace is the next read migration 0017 gives a Series read before
// it: an hour after its check. The simulation starts there, as a server
// upgraded to the scheduler does.
const migrationPace = time.Hour

// never is an arrival that has not happened.
const never = time.Duration(math.MinInt64)

// epoch is where the virtual clock's zero sits, for the policy's times.
var epoch = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time {
	if d == never {
		return time.Time{}
	}
	return epoch.Add(d)
}

// scheduler is the new Lane: poller/schedule's order and policy over
// in-memory queues in place of the store's due query. Each queue deletes
// lazily: an entry is live while its stamp is the Series' read count.
type scheduler struct {
	*lane
	policy   schedule.Policy
	cadence  []time.Duration
	arrived  []time.Duration
	nextRead []time.Duration
	stamp    []uint32
	listed   []bool
	listedAt []time.Duration // when the listing marked it (while listed)

	listedQ fifo    // Listed, by when seen
	due     minHeap // every Series by next read (Due)
	cooling fifo    // bookmarked Series read less than Floor ago, by when that ends
	ahead   minHeap // bookmarked Series read at least Floor ago, by next read (Ahead)

	walk        schedule.Walk
	nextListing time.Duration
	rows        []int32 // the Series on the listing page being read
	// emptySince is poll_lanes.listing_empty_since: since when the pages
	// the Site answered have named nothing (never: they name Series).
	emptySince time.Duration
}

func scheduled(cfg Config, st *site) *lane {
	x := newScheduler(cfg, st)
	x.start()
	for t := time.Duration(0); t < cfg.Horizon; {
		t = x.step(t)
	}
	x.finish()
	return x.lane
}

func newScheduler(cfg Config, st *site) *scheduler {
	return &scheduler{
		lane:     newLane(cfg, st),
		policy:   schedule.Policy{Floor: cfg.Floor, Backstop: cfg.Backstop, Listing: cfg.ListingEvery > 0},
		cadence:  make([]time.Duration, st.n),
		arrived:  make([]time.Duration, st.n),
		nextRead: make([]time.Duration, st.n),
		stamp:    make([]uint32, st.n),
		listed:   make([]bool, st.n),
		listedAt: make([]time.Duration, st.n),

		emptySince: never,
	}
}

// start is the state migration 0017 leaves: cadence and arrivals unknown,
// the next read an hour after the last check.
func (x *scheduler) start() {
	var cooling []entry
	for s := range int32(x.st.n) {
		x.arrived[s] = never
		x.nextRead[s] = x.readAt[s] + migrationPace
		x.due.items = append(x.due.items, entry{x.nextRead[s], s, 0})
		switch {
		case !x.st.bookmarked[s]:
		case x.readAt[s]+x.cfg.Floor <= 0:
			x.ahead.items = append(x.ahead.items, entry{x.nextRead[s], s, 0})
		default:
			cooling = append(cooling, entry{x.readAt[s] + x.cfg.Floor, s, 0})
		}
	}
	x.due.init()
	x.ahead.init()
	sortEntries(cooling)
	x.cooling.items = cooling
}

// step spends the slot at t (a listing walk spends several) and returns
// when the next one is; when nothing is owed, when something will be.
func (x *scheduler) step(t time.Duration) time.Duration {
	every, on := x.listingHealth(t)
	if on && t >= x.nextListing {
		x.nextListing = t + every
		return x.walkListing(t)
	}
	s, rank, ok := x.pick(t)
	if !ok {
		return x.wake(t)
	}
	x.readSeries(s, t, rank)
	return t + x.cfg.Spacing
}

// listingHealth is poller.readListing's rule, from the same functions:
// the listing is read every LISTING_EVERY, or once an hour once it is a
// broken listing reader (twelve hours of pages the Site answered that
// named nothing); and the schedule stretches cadence reads
// (Policy.Listing) while the listing is on and not broken. The Lane sets
// that flag at each pass's start, and a pass lasts at most until the next
// walk is owed; here it is set at every slot, a pass's start included.
// A listing that is not reached (an unreachable outage) is never recorded
// (poller.recordListing, ADR 0016: it says nothing about the reader), so
// it never turns broken and the stretch holds through the outage, as it
// does on a real Lane.
func (x *scheduler) listingHealth(t time.Duration) (time.Duration, bool) {
	every, on := schedule.ListingEvery(x.cfg.ListingEvery, at(x.emptySince), at(t))
	x.policy.Listing = on && !schedule.Broken(at(x.emptySince), at(t))
	return every, on
}

// pick is the next Series in schedule.Rank order (no Forced or Sighted in
// the simulation): Listed by when seen, Due by next read, Ahead by next read.
func (x *scheduler) pick(t time.Duration) (int32, schedule.Rank, bool) {
	for e, ok := x.listedQ.peek(); ok; e, ok = x.listedQ.peek() {
		x.listedQ.pop()
		if x.live(e) && x.listed[e.s] {
			return e.s, schedule.Listed, true
		}
	}
	for e, ok := x.cooling.peek(); ok && e.key <= t; e, ok = x.cooling.peek() {
		x.cooling.pop()
		if x.live(e) {
			x.ahead.push(entry{x.nextRead[e.s], e.s, e.stamp})
		}
	}
	if e, ok := x.top(&x.due); ok && e.key <= t {
		return e.s, schedule.Due, true
	}
	if e, ok := x.top(&x.ahead); ok {
		return e.s, schedule.Ahead, true
	}
	return 0, 0, false
}

// wake is when something will be owed, when nothing is at t.
func (x *scheduler) wake(t time.Duration) time.Duration {
	w := x.cfg.Horizon
	if x.cfg.ListingEvery > 0 {
		w = min(w, x.nextListing)
	}

	if e, ok := x.cooling.peek(); ok {
		w = min(w, e.key)
	}
	if e, ok := x.top(&x.due); ok {
		w = min(w, e.key)
	}
	return max(w, t+1)
}

func (x *scheduler) live(e entry) bool { return x.stamp[e.s] == e.stamp }

// top is h's first live entry, the dead ones above it dropped.
func (x *scheduler) top(h *minHeap) (entry, bool) {
	for len(h.items) > 0 {
		if e := h.items[0]; x.live(e) {
			return e, true
		}
		h.pop()
	}
	return entry{}, false
}

// readSeries reads s and schedules its next read as the Lane does: an
// arrival teaches the cadence (schedule.Learn), and Policy.Next says when.
func (x *scheduler) readSeries(s int32, t time.Duration, rank schedule.Rank) {
	if rank == schedule.Due && x.cadence[s] > 0 {
		x.cadenceReads++
	}
	if x.read(s, t, rank) {
		if !x.listed[s] {
			x.foundUnlisted++
		}
		x.cadence[s] = schedule.Learn(x.cadence[s], at(x.arrived[s]), at(t))
		x.arrived[s] = t
	}
	x.stamp[s]++
	x.listed[s] = false
	bookmarked := x.st.bookmarked[s]
	next := x.policy.Next(schedule.Series{Bookmarked: bookmarked, Cadence: x.cadence[s], ArrivedAt: at(x.arrived[s])}, at(t))
	x.nextRead[s] = next.Sub(epoch)
	x.due.push(entry{x.nextRead[s], s, x.stamp[s]})
	if bookmarked {
		x.cooling.push(entry{t + x.policy.Normalised().Floor, s, x.stamp[s]})
	}
}

// walkListing reads the listing from its first page through schedule.Walk,
// one request slot a page, and marks each bookmarked Series it names above
// its Latest Chapter as Listed; orphans take rows but are ignored, as the
// store ignores them. A broken listing is read one page a walk. In an
// unreachable outage the first page costs its slot and answers nothing:
// the walk stops, keeps its memory and records nothing (poller.readListing).
// It returns the slot after the last page.
func (x *scheduler) walkListing(t time.Duration) time.Duration {
	pages := schedule.MaxListingPages
	if schedule.Broken(at(x.emptySince), at(t)) {
		pages = 1
	}
	for page := 1; page <= pages; page++ {
		x.request(t)
		x.pages++
		if x.cfg.downAs(t) == unreachable {
			t += x.cfg.Spacing
			break
		}
		l := x.listingPage(page, t)
		if page == 1 {
			x.recordListing(t, len(l.Entries) > 0)
		}
		more := x.walk.Page(page, l)
		for _, s := range x.rows {
			// store.MarkListed: a Series nobody tracks is ignored.
			if x.st.bookmarked[s] && !x.listed[s] && x.chapter(s) > x.latest[s] {
				x.listed[s], x.listedAt[s] = true, t
				x.listedQ.push(entry{t, s, x.stamp[s]})
			}
		}
		t += x.cfg.Spacing
		if !more {
			break
		}
	}
	x.walk.Done()
	return t
}

// recordListing is store.RecordListing for a first page the Site answered:
// one that names Series clears the empty mark, one that names none sets it
// if it is not set.
func (x *scheduler) recordListing(t time.Duration, named bool) {
	switch {
	case named:
		x.emptySince = never
	case x.emptySince == never:
		x.emptySince = t
	}
}

// listingPage is the page-th page of the Site's listing at t: one row per
// Series, by its newest release, newest first, K a page; More when an
// older row exists. A row the listing omits is not there, and the rows
// below move up; in an empty outage the page names nothing.
func (x *scheduler) listingPage(page int, t time.Duration) adapters.Listing {
	x.rows = x.rows[:0]
	skip := (page - 1) * x.cfg.K
	var l adapters.Listing
	if x.cfg.downAs(t) == empty {
		return l
	}
	for j := x.next - 1; j >= 0; j-- {
		r := x.st.releases[j]
		if x.lastRelease[r.series] != int32(j) {
			continue // an older release of a Series listed higher up
		}
		if x.cfg.omitted(x.st, j) {
			continue // the Series is missing from the listing until it releases again
		}
		switch {
		case skip > 0:
			skip--
		case len(x.rows) < x.cfg.K:
			x.rows = append(x.rows, r.series)
			l.Entries = append(l.Entries, adapters.ListingEntry{
				Ref:     adapters.Ref{SeriesID: strconv.Itoa(int(r.series))},
				Chapter: word.Chapter(strconv.Itoa(int(r.chapter))),
			})
		default:
			l.More = true
			return l
		}
	}
	return l
}
