package schedule

import (
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/word"
)

// Listing walk limits (ADR 0016).
const (
	// DefaultListingEvery is LISTING_EVERY's default: how often a Lane reads
	// its Site's listing.
	DefaultListingEvery = 5 * time.Minute
	// MaxListingPages caps one walk: a Lane that was away longer than the
	// listing reaches back leaves the rest to cadence and the backstop.
	MaxListingPages = 5
	// BrokenAfter is how long a listing may parse to nothing before it is a
	// broken listing reader.
	BrokenAfter = 12 * time.Hour
	// BrokenListingEvery is how often a broken listing is still tried, one
	// page at a time, so a fixed reader is noticed without spending the
	// budget on a page that names nothing.
	BrokenListingEvery = time.Hour
)

// Walk is a Lane's memory of its listing between reads: the entries it has
// seen, so a walk stops at the first page that repeats one.
type Walk struct {
	seen map[string]word.Chapter
	next map[string]word.Chapter
}

// Seen reports whether e was named by an earlier walk with this chapter or
// a higher one.
func (w *Walk) Seen(e adapters.ListingEntry) bool {
	c, ok := w.seen[e.Ref.SeriesID]
	return ok && c.Compare(e.Chapter) >= 0
}

// Page records one page of the walk now under way, and reports whether the
// walk reads the next one: the page goes on, it named nothing seen before,
// and the cap is not reached. page counts from 1.
func (w *Walk) Page(page int, l adapters.Listing) (more bool) {
	if w.next == nil {
		w.next = map[string]word.Chapter{}
	}
	more = l.More && page < MaxListingPages && len(l.Entries) > 0
	for _, e := range l.Entries {
		if w.Seen(e) {
			more = false
		}
		if c, ok := w.next[e.Ref.SeriesID]; !ok || e.Chapter.Compare(c) > 0 {
			w.next[e.Ref.SeriesID] = e.Chapter
		}
	}
	return more
}

// Done ends a walk: what it saw is what the next walk stops at. A walk
// that read nothing (every page failed) keeps the memory it had.
func (w *Walk) Done() {
	if len(w.next) == 0 {
		return
	}
	w.seen, w.next = w.next, nil
}

// ListingEvery is how long after a listing read the next is owed: every,
// or BrokenListingEvery for a listing broken since brokenSince (zero: not
// broken). every <= 0 turns the listing off (false).
func ListingEvery(every time.Duration, emptySince, now time.Time) (time.Duration, bool) {
	if every <= 0 {
		return 0, false
	}
	if Broken(emptySince, now) {
		return max(every, BrokenListingEvery), true
	}
	return every, true
}

// Broken reports whether a listing that has parsed to nothing since
// emptySince (zero: it has not) is a broken listing reader at now.
func Broken(emptySince, now time.Time) bool {
	return !emptySince.IsZero() && now.Sub(emptySince) >= BrokenAfter
}
