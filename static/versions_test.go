package static

import (
	"slices"
	"testing"
)

// /metrics names a userscript version only when it was released: the one
// this server serves is the newest of them, and each is a version.
func TestMetricsKnowEveryReleasedUserscriptVersion(t *testing.T) {
	vs := UserscriptVersions()
	if len(vs) < 10 || vs[0] != "1.0.0" {
		t.Fatalf("released versions %v, want 1.0.0 first and every one after it", vs)
	}
	if served := UserscriptVersion(); vs[len(vs)-1] != served || slices.Index(vs, served) != len(vs)-1 {
		t.Errorf("the served userscript %s is not the newest released one (%s)", served, vs[len(vs)-1])
	}
}
