package schedule

import (
	"cmp"
	"slices"
	"time"
)

// Candidate is what the Lane's order reads of one pollable Series (not
// Finished, with an address); a zero time is NULL.
type Candidate struct {
	ID string
	// Checked is the last check (zero: never); Forced the owner's ask;
	// Sighted the last Sighting that raised Latest Chapter; Listed when
	// the listing named a chapter above it; Next the scheduled next read
	// (zero: never read, owed at once).
	Checked, Forced, Sighted, Listed, Next time.Time
	Bookmarked                             bool
}

// Ask is the Lane's side of the order: the time, the floor (POLL_EVERY)
// and the Lane's unserved Forced Poll (zero: none).
type Ask struct {
	Now       time.Time
	Floor     time.Duration
	LaneForce time.Time
}

// Picked is a due Candidate with the rank and key it is read by.
type Picked struct {
	Candidate
	Rank Rank
	Key  time.Time // zero sorts first: -infinity
}

// RankOf is the first rank c is due in, with its key, and false when c is
// not due at all. The store's due query (store/poll.go) is this rule as SQL
// over partial indexes; the two are held equal by a store test.
func RankOf(c Candidate, a Ask) (Picked, bool) {
	checked := c.Checked // zero: -infinity, before every time
	after := func(t time.Time) bool { return !t.IsZero() && t.After(checked) }
	switch {
	case after(c.Forced):
		return Picked{c, Forced, c.Forced}, true
	case !a.LaneForce.IsZero() && !checked.After(a.LaneForce):
		return Picked{c, LaneForced, checked}, true
	case after(c.Sighted):
		return Picked{c, Sighted, c.Sighted}, true
	case after(c.Listed):
		return Picked{c, Listed, c.Listed}, true
	case !c.Next.After(a.Now):
		return Picked{c, Due, c.Next}, true
	case c.Bookmarked && !checked.After(a.Now.Add(-a.Floor)):
		return Picked{c, Ahead, c.Next}, true
	}
	return Picked{}, false
}

// Order is the due Candidates in the order a Lane reads them: by rank,
// then key (-infinity first), then id.
func Order(cs []Candidate, a Ask) []Picked {
	var out []Picked
	for _, c := range cs {
		if p, ok := RankOf(c, a); ok {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(x, y Picked) int {
		return cmp.Or(cmp.Compare(x.Rank, y.Rank), x.Key.Compare(y.Key), cmp.Compare(x.ID, y.ID))
	})
	return out
}
