package schedule_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/poller/schedule"
	"github.com/mangabookmark/mangabookmark/word"
)

var now = time.Date(2026, 8, 21, 8, 0, 0, 0, time.UTC)

const (
	hour = time.Hour
	day  = 24 * time.Hour
	// aim is the longest interval at the default backstop: a fiftieth inside it.
	aim = 7*day - 7*day/50
)

func TestIntervalFollowsTheCadenceWithinTheFloorAndTheBackstop(t *testing.T) {
	t.Parallel()
	policy := schedule.Policy{Floor: hour, Backstop: 7 * day}
	listing := schedule.Policy{Floor: hour, Backstop: 7 * day, Listing: true}
	arrived := func(ago time.Duration) time.Time { return now.Add(-ago) }
	cases := []struct {
		name   string
		policy schedule.Policy
		s      schedule.Series
		want   time.Duration
	}{
		{"an orphan is aimed inside the backstop whatever its cadence", policy,
			schedule.Series{Bookmarked: false, Cadence: day, ArrivedAt: arrived(2 * hour)}, aim},
		{"an unknown cadence is aimed inside the backstop", policy,
			schedule.Series{Bookmarked: true, ArrivedAt: arrived(2 * hour)}, aim},
		{"a cadence with no arrival is aimed inside the backstop", policy,
			schedule.Series{Bookmarked: true, Cadence: day}, aim},
		{"before the next chapter is expected it waits until then", policy,
			schedule.Series{Bookmarked: true, Cadence: day, ArrivedAt: arrived(6 * hour)}, 18 * hour},
		{"just overdue it looks every quarter cadence", policy,
			schedule.Series{Bookmarked: true, Cadence: day, ArrivedAt: arrived(30 * hour)}, 6 * hour},
		{"overdue by almost three cadences it still looks every quarter cadence", policy,
			schedule.Series{Bookmarked: true, Cadence: day, ArrivedAt: arrived(4*day - time.Minute)}, 6 * hour},
		{"quiet for four cadences it waits half the silence", policy,
			schedule.Series{Bookmarked: true, Cadence: day, ArrivedAt: arrived(4 * day)}, 2 * day},
		{"a healthy listing stretches the wait four times", listing,
			schedule.Series{Bookmarked: true, Cadence: day, ArrivedAt: arrived(6 * hour)}, 72 * hour},
		{"a healthy listing stretches the overdue look four times", listing,
			schedule.Series{Bookmarked: true, Cadence: day, ArrivedAt: arrived(30 * hour)}, day},
		{"never sooner than the floor", policy,
			schedule.Series{Bookmarked: true, Cadence: 2 * hour, ArrivedAt: arrived(110 * time.Minute)}, hour},
		{"never later than the aim", policy,
			schedule.Series{Bookmarked: true, Cadence: day, ArrivedAt: arrived(20 * day)}, aim},
		{"a stretched wait is never later than the aim", listing,
			schedule.Series{Bookmarked: true, Cadence: 3 * day, ArrivedAt: now}, aim},
		{"a zero policy is the defaults", schedule.Policy{},
			schedule.Series{Bookmarked: true, Cadence: 2 * hour, ArrivedAt: arrived(110 * time.Minute)}, schedule.DefaultFloor},
		{"a floor above the backstop is the backstop", schedule.Policy{Floor: 10 * day, Backstop: 7 * day},
			schedule.Series{}, 7 * day},
		{"a short backstop aims inside itself", schedule.Policy{Floor: time.Minute, Backstop: 50 * hour},
			schedule.Series{}, 49 * hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := c.policy.Interval(c.s, now); got != c.want {
				t.Fatalf("Interval = %v, want %v", got, c.want)
			}
			if got := c.policy.Next(c.s, now); !got.Equal(now.Add(c.want)) {
				t.Fatalf("Next = %v, want %v", got, now.Add(c.want))
			}
		})
	}
}

func TestLearnTakesTheFirstGapAndThenMovesAQuarterOfTheWay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		cadence time.Duration
		prev    time.Time
		want    time.Duration
	}{
		{"a first arrival leaves the cadence unknown", 0, time.Time{}, 0},
		{"an arrival with no previous one keeps the cadence", 5 * hour, time.Time{}, 5 * hour},
		{"a second arrival's gap is the cadence", 0, now.Add(-10 * hour), 10 * hour},
		{"later gaps move it a quarter of the way", 8 * hour, now.Add(-16 * hour), 10 * hour},
		{"a shorter gap moves it down a quarter of the way", 8 * hour, now.Add(-4 * hour), 7 * hour},
		{"two arrivals minutes apart count as MinGap", 0, now.Add(-10 * time.Minute), schedule.MinGap},
		{"a short gap moves it by MinGap", 8 * hour, now.Add(-time.Minute), (3*8*hour + schedule.MinGap) / 4},
		{"an arrival at the same time as the last keeps the cadence", 8 * hour, now, 8 * hour},
		{"an arrival before the last keeps the cadence", 8 * hour, now.Add(hour), 8 * hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := schedule.Learn(c.cadence, c.prev, now); got != c.want {
				t.Fatalf("Learn(%v, %v) = %v, want %v", c.cadence, c.prev, got, c.want)
			}
		})
	}
}

// page is a listing page naming id:chapter pairs.
func page(more bool, pairs ...string) adapters.Listing {
	l := adapters.Listing{More: more}
	for _, p := range pairs {
		id, ch, _ := strings.Cut(p, ":")
		c, ok := word.ParseChapter(ch)
		if !ok {
			panic("not a chapter: " + p)
		}
		l.Entries = append(l.Entries, adapters.ListingEntry{
			Ref: adapters.Ref{Site: "novelfull", SeriesID: id}, Chapter: c})
	}
	return l
}

func TestAWalkGoesOnUntilItMeetsWhatTheLastWalkSaw(t *testing.T) {
	t.Parallel()
	var w schedule.Walk
	if !w.Page(1, page(true, "a:5", "b:3")) {
		t.Fatal("a first walk stopped at a page that goes on")
	}
	if w.Page(2, page(false, "c:9")) {
		t.Fatal("the walk went past a page that does not go on")
	}
	w.Done()

	if !w.Seen(page(false, "a:5").Entries[0]) || !w.Seen(page(false, "a:4").Entries[0]) {
		t.Fatal("an entry the last walk named, at or below its chapter, is not seen")
	}
	if w.Seen(page(false, "a:6").Entries[0]) || w.Seen(page(false, "d:1").Entries[0]) {
		t.Fatal("a higher chapter or a new Series counts as seen")
	}
	if !w.Page(1, page(true, "a:6", "d:1")) {
		t.Fatal("a page of new chapters stopped the walk")
	}
	if w.Page(2, page(true, "e:2", "b:3")) {
		t.Fatal("a page repeating an entry of the last walk did not stop it")
	}
	w.Done()
	// The memory is now this walk's: a:6 is seen, a:5 is below it.
	if !w.Seen(page(false, "a:6").Entries[0]) || !w.Seen(page(false, "b:3").Entries[0]) {
		t.Fatal("the second walk's entries are not remembered")
	}
}

func TestAWalkStopsAtTheCapAndAtAnEmptyPage(t *testing.T) {
	t.Parallel()
	var w schedule.Walk
	for p := 1; p < schedule.MaxListingPages; p++ {
		if !w.Page(p, page(true, fmt.Sprintf("s%d:1", p))) {
			t.Fatalf("page %d stopped the walk", p)
		}
	}
	if w.Page(schedule.MaxListingPages, page(true, "last:1")) {
		t.Fatal("the walk went past MaxListingPages")
	}
	var empty schedule.Walk
	if empty.Page(1, page(true)) {
		t.Fatal("an empty page that claims more went on")
	}
}

func TestAWalkThatReadNothingKeepsItsMemory(t *testing.T) {
	t.Parallel()
	var w schedule.Walk
	w.Page(1, page(true, "a:5"))
	w.Done()
	w.Done() // every page failed: nothing recorded
	w.Page(1, page(true))
	w.Done() // an empty page: nothing named
	if !w.Seen(page(false, "a:5").Entries[0]) {
		t.Fatal("a walk that read nothing forgot what the one before saw")
	}
	if w.Page(1, page(true, "b:1", "a:5")) {
		t.Fatal("the walk after did not stop at the remembered entry")
	}
}

func TestTheListingIsReadEveryIntervalAndHourlyOnceBroken(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		every      time.Duration
		emptySince time.Time
		want       time.Duration
		on, broken bool
	}{
		{"zero turns the listing off", 0, time.Time{}, 0, false, false},
		{"below zero turns it off", -time.Minute, time.Time{}, 0, false, false},
		{"a listing that names Series is read every interval", 5 * time.Minute, time.Time{}, 5 * time.Minute, true, false},
		{"empty for under twelve hours is not yet broken", 5 * time.Minute, now.Add(-schedule.BrokenAfter + time.Second),
			5 * time.Minute, true, false},
		{"empty for twelve hours is broken and read hourly", 5 * time.Minute, now.Add(-schedule.BrokenAfter),
			schedule.BrokenListingEvery, true, true},
		{"a broken listing is never read more often than configured", 2 * hour, now.Add(-day), 2 * hour, true, true},
		{"off stays off when broken", 0, now.Add(-day), 0, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			every, on := schedule.ListingEvery(c.every, c.emptySince, now)
			if every != c.want || on != c.on {
				t.Fatalf("ListingEvery = %v, %v; want %v, %v", every, on, c.want, c.on)
			}
			if got := schedule.Broken(c.emptySince, now); got != c.broken {
				t.Fatalf("Broken = %v, want %v", got, c.broken)
			}
		})
	}
}

func TestTheLanesOrder(t *testing.T) {
	t.Parallel()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	in := func(d time.Duration) time.Time { return now.Add(d) }
	recent, far := ago(10*time.Minute), in(5*day)
	cs := []schedule.Candidate{
		{ID: "ahead-late", Checked: ago(2 * hour), Next: in(3 * day), Bookmarked: true},
		{ID: "ahead-soon", Checked: ago(2 * hour), Next: in(2 * day), Bookmarked: true},
		{ID: "backstop-due", Checked: ago(7 * day), Next: ago(time.Minute), Bookmarked: true},
		{ID: "cadence-overdue", Checked: ago(6 * hour), Next: ago(2 * hour), Bookmarked: true},
		{ID: "never-read"},
		{ID: "orphan-due", Checked: ago(7 * day), Next: ago(30 * time.Minute)},
		{ID: "orphan-waiting", Checked: ago(3 * day), Next: far},
		{ID: "recently-checked", Checked: recent, Next: far, Bookmarked: true},
		{ID: "listed", Checked: recent, Listed: ago(time.Minute), Next: far, Bookmarked: true},
		{ID: "listed-earlier", Checked: recent, Listed: ago(2 * time.Minute), Next: far, Bookmarked: true},
		{ID: "listed-before-its-check", Checked: recent, Listed: ago(hour), Next: far, Bookmarked: true},
		{ID: "sighted", Checked: recent, Sighted: ago(time.Minute), Next: far, Bookmarked: true},
		{ID: "sighted-and-listed", Checked: recent, Sighted: ago(3 * time.Minute), Listed: ago(4 * time.Minute), Next: far, Bookmarked: true},
		{ID: "forced", Checked: recent, Forced: ago(time.Minute), Next: far, Bookmarked: true},
		{ID: "forced-and-listed", Checked: recent, Forced: ago(2 * time.Minute), Listed: ago(5 * time.Minute), Next: far},
		{ID: "forced-before-its-check", Checked: recent, Forced: ago(hour), Next: far, Bookmarked: true},
	}
	var got []string
	for _, p := range schedule.Order(cs, schedule.Ask{Now: now, Floor: hour}) {
		got = append(got, p.Rank.String()+" "+p.ID)
	}
	want := []string{
		"forced forced-and-listed", "forced forced",
		"sighted sighted-and-listed", "sighted sighted",
		"listed listed-earlier", "listed listed",
		"due never-read", "due cadence-overdue", "due orphan-due", "due backstop-due",
		"ahead ahead-soon", "ahead ahead-late",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("order\n got %q\nwant %q", got, want)
	}
}

func TestRankOf(t *testing.T) {
	t.Parallel()
	force := now.Add(-30 * time.Minute)
	cases := []struct {
		name string
		c    schedule.Candidate
		ask  schedule.Ask
		rank schedule.Rank
		key  time.Time
		due  bool
	}{
		{"a Forced Poll goes first, keyed by the ask",
			schedule.Candidate{Checked: now.Add(-hour), Forced: now.Add(-time.Minute), Sighted: now.Add(-2 * time.Minute), Next: now.Add(-hour)},
			schedule.Ask{Now: now, Floor: hour, LaneForce: force}, schedule.Forced, now.Add(-time.Minute), true},
		{"a Series checked before the Lane's Forced Poll is owed a read, keyed by its check",
			schedule.Candidate{Checked: now.Add(-hour), Sighted: now.Add(-time.Minute), Next: now.Add(day)},
			schedule.Ask{Now: now, Floor: hour, LaneForce: force}, schedule.LaneForced, now.Add(-hour), true},
		{"a Series never checked is owed the Lane's Forced Poll",
			schedule.Candidate{}, schedule.Ask{Now: now, Floor: hour, LaneForce: force}, schedule.LaneForced, time.Time{}, true},
		{"a Series checked since the Lane's Forced Poll is not owed it",
			schedule.Candidate{Checked: now.Add(-time.Minute), Next: now.Add(day), Bookmarked: true},
			schedule.Ask{Now: now, Floor: hour, LaneForce: force}, 0, time.Time{}, false},
		{"a Sighting comes before the listing",
			schedule.Candidate{Checked: now.Add(-hour), Sighted: now.Add(-time.Minute), Listed: now.Add(-2 * time.Minute), Next: now.Add(day)},
			schedule.Ask{Now: now, Floor: hour}, schedule.Sighted, now.Add(-time.Minute), true},
		{"a listed orphan is still listed (the store marks only tracked Series)",
			schedule.Candidate{Checked: now.Add(-hour), Listed: now.Add(-time.Minute), Next: now.Add(day)},
			schedule.Ask{Now: now, Floor: hour}, schedule.Listed, now.Add(-time.Minute), true},
		{"a listing seen before the check is served",
			schedule.Candidate{Checked: now.Add(-time.Minute), Listed: now.Add(-hour), Next: now.Add(day), Bookmarked: true},
			schedule.Ask{Now: now, Floor: hour}, 0, time.Time{}, false},
		{"a never-read Series is due first of all due ones",
			schedule.Candidate{Bookmarked: true}, schedule.Ask{Now: now, Floor: hour}, schedule.Due, time.Time{}, true},
		{"a next read time just come is due",
			schedule.Candidate{Checked: now.Add(-hour), Next: now}, schedule.Ask{Now: now, Floor: hour}, schedule.Due, now, true},
		{"an orphan is never ahead",
			schedule.Candidate{Checked: now.Add(-6 * day), Next: now.Add(time.Minute)}, schedule.Ask{Now: now, Floor: hour}, 0, time.Time{}, false},
		{"a bookmarked Series read a floor ago is ahead, keyed by its next read",
			schedule.Candidate{Checked: now.Add(-hour), Next: now.Add(day), Bookmarked: true},
			schedule.Ask{Now: now, Floor: hour}, schedule.Ahead, now.Add(day), true},
		{"a recently checked bookmarked Series is not due",
			schedule.Candidate{Checked: now.Add(-hour + time.Second), Next: now.Add(day), Bookmarked: true},
			schedule.Ask{Now: now, Floor: hour}, 0, time.Time{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, due := schedule.RankOf(c.c, c.ask)
			if due != c.due || (due && (p.Rank != c.rank || !p.Key.Equal(c.key))) {
				t.Fatalf("RankOf = %v %v key %v; want %v %v key %v", p.Rank, due, p.Key, c.rank, c.due, c.key)
			}
		})
	}
}
