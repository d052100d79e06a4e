package components

import (
	"strconv"

	"github.com/a-h/templ"

	"github.com/mangabookmark/mangabookmark/word"
)

func itoa(n int) string { return strconv.Itoa(n) }

// thousands groups a count's digits by three, as the import's sentences
// write 10,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// importSummary is the first sentence of an import's answer: the counts
// follow it, then the lines.
func importSummary(a AddBox) string {
	file := "Imported a file of " + thousands(a.Entries) + " entries"
	if a.Entries == 1 {
		file = "Imported a file of 1 entry"
	}
	if a.Unshown > 0 {
		return file + ". What happened to them:"
	}
	return file + "; each line says what happened to one."
}

// entryNumber numbers an import's result line as its entry in the file;
// a paste's lines keep the list's own count.
func entryNumber(n int) templ.Attributes {
	if n == 0 {
		return nil
	}
	return templ.Attributes{"value": strconv.Itoa(n)}
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

// figure prints a stats-block figure; above the cap it says so.
func figure(s Stat) string { return capped(s.N, s.Capped) }

// capped is how every capped figure and count reads, landing and list
// alike: "1000+" above the cap.
func capped(n int64, over bool) string {
	if over {
		return strconv.FormatInt(n, 10) + "+"
	}
	return strconv.FormatInt(n, 10)
}

func statID(filter string) string {
	if filter == "" {
		return "stat-all"
	}
	return "stat-" + filter
}

// verdictPhrase names one condition with its subject and age, in the words
// the owner notice uses (word.NoticeKind.Fault), tagged with its kind.
func verdictPhrase(it VerdictItem) string {
	return it.Kind.Fault(it.Site, it.Age) + " (" + string(it.Kind) + ")"
}

func filterKey(v string) string {
	if v == "" {
		return "all"
	}
	return v
}

func titleOr(title, id string) string {
	if title == "" {
		return id
	}
	return title
}

func correctionValue(d SeriesDetail) string {
	if d.Correction != "" {
		return d.Correction
	}
	return d.Latest
}

// verdictSep ends each named condition: a semicolon between, a full stop
// after the last.
func verdictSep(i, n int) string {
	if i == n-1 {
		return "."
	}
	return ";"
}

// meaningID is the id of a filter's meaning sentence on the page, the
// target of its figure's aria-describedby.
func meaningID(filter string) string { return "meaning-" + filterKey(filter) }

// liveAttrs make an element ask its own address again every two seconds
// and replace itself with the answer; an answer without them (the request
// was served) ends the asking. "" gives none.
func liveAttrs(url string) templ.Attributes {
	if url == "" {
		return templ.Attributes{}
	}
	return templ.Attributes{"hx-get": url, "hx-trigger": "every 2s", "hx-swap": "outerHTML", "data-live": "true"}
}

// setupTestID is a setup step's test id: the dead webhook keeps the id its
// line has on the Lanes page.
func setupTestID(step string) string {
	if step == "webhook-dead" {
		return step
	}
	return "setup-" + step
}

// earlyLead opens the verdict's "too early to tell" with the count of faults
// younger than ownerWindow.
func earlyLead(e Early) string {
	noun := "faults"
	if e.Total == "1" {
		noun = "fault"
	}
	return e.Total + " " + noun + " began less than " + word.Age(word.OwnerWindow) + " ago; each needs you once it has held that long."
}
