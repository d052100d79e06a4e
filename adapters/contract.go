// Package adapters reads the six Sites: recognise an address, gate it, fetch
// it through the Site's route, classify the answer and parse the facts.
//
// This file is the contract the poller codes against; the adapters branch
// fills in the rest.
package adapters

import "time"

// Outcome is one of the seven words a Poll ends in.
type Outcome string

// The outcome words (SPEC.md, "The Poll").
const (
	OK          Outcome = "ok"
	NoChapter   Outcome = "no_chapter"
	Unfetchable Outcome = "unfetchable"
	NotFound    Outcome = "not_found"
	Errors      Outcome = "errors"
	Refused     Outcome = "refused"
	Unreachable Outcome = "unreachable"
)

// Outcomes lists every word, in the pass log's column order.
var Outcomes = []Outcome{OK, NoChapter, Unfetchable, NotFound, Errors, Refused, Unreachable}

// Kinds of Series.
const (
	KindManga = "manga"
	KindNovel = "novel"
)

// Facts is what one read learned.
type Facts struct {
	Title, CoverURL, Kind string
	LatestChapter         string // canonical decimal; "" when !HasLatest
	LatestChapterURL      string
	HasLatest             bool
	Completed             bool
}

// Ref identifies a recognised Series.
type Ref struct{ Site, SeriesID, URL string }

// Result is the outcome of one read.
type Result struct {
	Outcome    Outcome
	Facts      Facts
	Checked    bool // the Site's own answer arrived (not a challenge, not a transport failure)
	Status     int
	RetryAfter time.Duration // from a 429
	Err        error
}
