package word

import "strconv"

// A pass that read nothing is a pass that owed Polls and got no page read:
// the pass log's due > 0, checked = 0, no skip and refused = 0
// (CONTEXT.md, Pass that read nothing). The Lanes page's strip counts and
// marks these. It never calls one a stall: Stall is the owner notice a run
// of them becomes after ownerWindow, and one such pass in the first minute
// (one unreachable Site) is not that.
const (
	ReadNothingOne  = "pass that read nothing"
	ReadNothingMany = "passes that read nothing"
	// ReadNothingMark names the strip's mark below the axis (its CSS
	// class is "mark-" + ReadNothingMark).
	ReadNothingMark = "read-nothing"
)

// ReadNothingCount is n such passes in words: "1 pass that read nothing",
// "2 passes that read nothing".
func ReadNothingCount(n int) string {
	if n == 1 {
		return "1 " + ReadNothingOne
	}
	return strconv.Itoa(n) + " " + ReadNothingMany
}
