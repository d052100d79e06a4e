package handlers

import (
	"maps"
	"net/http"
	"slices"
	"sync"

	"github.com/mangabookmark/mangabookmark/components"
)

// importShown bounds the result lines an import's answer draws, and
// importListRows the rows of the Reader's list drawn with it: whatever the
// file's size, the answer costs the same (CONTEXT.md, What the server
// promises: an import's memory). Every entry is still counted.
const (
	importShown    = 100
	importListRows = 100
)

// importOutcomes are the counts an import's answer names, in this order:
// each result word, what happened to its entries, and whether they need
// the Reader's attention.
var importOutcomes = []struct {
	word, label string
	fault       bool
}{
	{"added", "added", false},
	{"progress", "already bookmarked; Progress moved forward", false},
	{"already", "already bookmarked; nothing changed", false},
	{"unsupported", "not added: not an address of a Site here (each line says why)", true},
	{string(apiNotAChapter), "not added: the progress is not a chapter number", true},
	{"failed", "not added just now: import the file again to add them", true},
}

// importTally gathers an import's results as the entries finish: a count
// per result word, and of the lines, only those the answer may draw (the
// first importShown that need the Reader's attention, and the first
// importShown others), so a 10,000-entry file keeps no 10,000 results.
type importTally struct {
	mu        sync.Mutex
	counts    map[string]int
	attention []components.AddResult
	others    []components.AddResult
}

func newImportTally() *importTally { return &importTally{counts: map[string]int{}} }

// add counts the result of entry i (from 0).
func (t *importTally) add(i int, res components.AddResult) {
	res.N = i + 1
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts[res.Word]++
	if res.Fault {
		t.attention = keepFirst(t.attention, res)
	} else {
		t.others = keepFirst(t.others, res)
	}
}

// keepFirst adds res to lines, keeping the importShown lowest-numbered:
// entries finish a few at a time, nearly in the file's order.
func keepFirst(lines []components.AddResult, res components.AddResult) []components.AddResult {
	if len(lines) < importShown {
		return append(lines, res)
	}
	last := 0
	for j := range lines {
		if lines[j].N > lines[last].N {
			last = j
		}
	}
	if res.N < lines[last].N {
		lines[last] = res
	}
	return lines
}

// fill puts the counts and the lines to draw on box: those that need the
// Reader's attention first, then the file's first others, in the file's
// order; 503 when an entry could not be saved.
func (t *importTally) fill(box *components.AddBox, entries int) int {
	byEntry := func(a, b components.AddResult) int { return a.N - b.N }
	slices.SortFunc(t.attention, byEntry)
	slices.SortFunc(t.others, byEntry)
	shown := append(t.attention, t.others[:min(len(t.others), importShown-len(t.attention))]...)
	slices.SortFunc(shown, byEntry)
	box.Entries, box.Results, box.Unshown = entries, shown, entries-len(shown)
	for _, o := range importOutcomes {
		if n := t.counts[o.word]; n > 0 {
			box.Tally = append(box.Tally, components.AddCount{Word: o.word, Label: o.label, N: n, Fault: o.fault})
		}
		delete(t.counts, o.word)
	}
	// A word the table does not know yet is still counted, under itself.
	for _, w := range slices.Sorted(maps.Keys(t.counts)) {
		box.Tally = append(box.Tally, components.AddCount{Word: w, Label: w, N: t.counts[w], Fault: true})
	}
	if slices.ContainsFunc(box.Tally, func(c components.AddCount) bool { return c.Word == "failed" }) {
		return http.StatusServiceUnavailable
	}
	return http.StatusOK
}
