package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkImport10000 is issue 24, item 7's bound: a 10,000-entry export
// imported through the real router into a real database, each entry its own
// transaction, answered with a line each. The promise is within 30 s an
// import (s/import); a benchmark, not a timed test (make bench-go).
func BenchmarkImport10000(b *testing.B) {
	h := newHarness(b)
	c := h.client(readerA)
	var f strings.Builder
	f.WriteString(`{"version":1,"exported_at":"2026-12-01T10:00:00Z","reader":"A","bookmarks":[`)
	for i := range 10000 {
		if i > 0 {
			f.WriteString(",")
		}
		fmt.Fprintf(&f, "\n"+`{"site":"asurascans","series_id":"s-%d","url":"https://asurascans.com/comics/s-%d","title":"","progress":%d,"added_at":"2026-11-01T10:00:00Z"}`, i, i, i%300+1)
	}
	f.WriteString("\n]}\n")
	body := []byte(f.String())
	for b.Loop() {
		b.StopTimer()
		h.exec(`DELETE FROM bookmarks`)
		h.exec(`DELETE FROM series`)
		b.StartTimer()
		a := h.importFile(c, "export.json", body)
		if a.status != http.StatusOK || a.testid("add-result").Length() != 10000 {
			b.Fatalf("import: %d, %d lines", a.status, a.testid("add-result").Length())
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/import")
}
