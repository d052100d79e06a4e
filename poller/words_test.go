package poller_test

import (
	"testing"

	"github.com/mangabookmark/mangabookmark/word"
)

// TestEveryOutcomeIsCountedInItsOwnColumn runs Polls ending in each of the
// seven Outcomes and reads the pass log's columns by their SQL names: a
// count written to the wrong column, or not written at all, shows here.
func TestEveryOutcomeIsCountedInItsOwnColumn(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.series("ok", "no-chapter", "unfetchable", "not-found", "errors", "refused")
	r.rd.script(url("no-chapter"), failResult(word.NoChapter, 200, true))
	r.rd.script(url("unfetchable"), failResult(word.Unfetchable, 0, false))
	r.rd.script(url("not-found"), failResult(word.NotFound, 404, true))
	r.rd.script(url("errors"), failResult(word.Errors, 503, true))
	r.rd.script(url("refused"), failResult(word.Refused, 403, false)) // one refusal does not break the pass
	r.pass()
	r.rd.routes["comix"] = word.RouteBrowser
	r.seriesOn("comix", "c")
	r.rd.script(url("c"), failResult(word.Unreachable, 0, false))
	r.p.RunPass(r.ctx, "comix")

	// The column names are spelled out here on purpose: this is the check on
	// the words, not another use of them.
	columns := map[word.Outcome]string{
		word.OK: "ok", word.NoChapter: "no_chapter", word.Unfetchable: "unfetchable",
		word.NotFound: "not_found", word.Errors: "errors", word.Refused: "refused",
		word.Unreachable: "unreachable",
	}
	if len(columns) != len(word.Outcomes) {
		t.Fatalf("the test names %d outcome columns; there are %d Outcomes", len(columns), len(word.Outcomes))
	}
	for _, o := range word.Outcomes {
		col, ok := columns[o]
		if !ok {
			t.Fatalf("outcome %q has no column in this test", o)
		}
		want := map[string]int{site: 1, "comix": 0}
		if o == word.Unreachable {
			want = map[string]int{site: 0, "comix": 1}
		}
		for s, n := range want {
			var got int
			if err := r.st.Pool().QueryRow(r.ctx, `SELECT `+col+` FROM poll_passes WHERE site = $1`, s).Scan(&got); err != nil {
				t.Fatalf("%s on %s: %v", col, s, err)
			}
			if got != n {
				t.Errorf("pass log column %s on %s = %d, want %d", col, s, got, n)
			}
		}
		if got := r.passes(site)[0].Of(o) + r.passes("comix")[0].Of(o); got != 1 {
			t.Errorf("the store reads %d Polls of %s back, want 1", got, o)
		}
	}
}
