package word

import "slices"

// Outcome is the word a Poll ends in. The pass log keeps one count column
// per word, named as the word; a failure row holds the word of a failing
// Poll (CONTEXT.md, Outcome; ADR 0003).
type Outcome string

// The seven Outcomes.
const (
	OK          Outcome = "ok"
	NoChapter   Outcome = "no_chapter"
	Unfetchable Outcome = "unfetchable"
	NotFound    Outcome = "not_found"
	Errors      Outcome = "errors"
	Refused     Outcome = "refused"
	Unreachable Outcome = "unreachable"
)

// Outcomes lists every Outcome in the pass log's column order.
var Outcomes = []Outcome{OK, NoChapter, Unfetchable, NotFound, Errors, Refused, Unreachable}

// Valid reports whether o is one of the seven.
func (o Outcome) Valid() bool { return slices.Contains(Outcomes, o) }

// Column is the pass log's count column for o, qualified by the alias (""
// for none): poll_passes has one column per Outcome, named as the word.
func (o Outcome) Column(alias string) string {
	if alias == "" {
		return string(o)
	}
	return alias + "." + string(o)
}

// SQL is o as an SQL string literal, for predicates over failure rows.
func (o Outcome) SQL() string { return sqlText(string(o)) }

// Counts is how many Polls ended in each Outcome: the one shape of outcome
// counts, for a pass, the pass log row and the Lanes page. Its fields carry
// the pass log's column names, so a row scans straight into it.
type Counts struct {
	OK          int `db:"ok"`
	NoChapter   int `db:"no_chapter"`
	Unfetchable int `db:"unfetchable"`
	NotFound    int `db:"not_found"`
	Errors      int `db:"errors"`
	Refused     int `db:"refused"`
	Unreachable int `db:"unreachable"`
}

// field is the count of o in c, nil for a word that is not an Outcome.
func (c *Counts) field(o Outcome) *int {
	switch o {
	case OK:
		return &c.OK
	case NoChapter:
		return &c.NoChapter
	case Unfetchable:
		return &c.Unfetchable
	case NotFound:
		return &c.NotFound
	case Errors:
		return &c.Errors
	case Refused:
		return &c.Refused
	case Unreachable:
		return &c.Unreachable
	}
	return nil
}

// Add counts one Poll that ended in o; a word that is not an Outcome is not
// counted.
func (c *Counts) Add(o Outcome) {
	if f := c.field(o); f != nil {
		*f++
	}
}

// Of is the count of o.
func (c Counts) Of(o Outcome) int {
	if f := c.field(o); f != nil {
		return *f
	}
	return 0
}

// Plain is o in the owner's words, the one form every page shows; the
// machine word stays in the pass log, the API and data attributes. A word
// that is not an Outcome is shown as it is.
func (o Outcome) Plain() string {
	switch o {
	case OK:
		return "read"
	case NoChapter:
		return "no chapter found"
	case Unfetchable:
		return "address refused"
	case NotFound:
		return "page gone"
	case Errors:
		return "read failed"
	case Refused:
		return "refused by the Site"
	case Unreachable:
		return "not reached"
	}
	return string(o)
}

// PlainOn is o's plain words for a Site read over route r: unreachable on
// the plain route is our network not reaching the Site's host, on the
// browser route the sidecar not answering (docs/adr/0022).
func (o Outcome) PlainOn(r Route) string {
	if o != Unreachable {
		return o.Plain()
	}
	if r == RouteBrowser {
		return "sidecar unreachable"
	}
	return "Site not reached"
}
