package handlers

import (
	"strings"
	"testing"
)

// FuzzAddLines: a paste splits into trimmed, non-empty lines, each holding
// no line break, as many as the paste has lines with something on them.
func FuzzAddLines(f *testing.F) {
	for _, s := range []string{"", "https://asurascans.com/comics/x\n\n  https://novelfull.com/y.html  ", "a\r\nb\rc", "\n\n\t\n", "x\u2028y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := addLines(raw)
		want := 0
		for _, l := range strings.FieldsFunc(raw, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if strings.TrimSpace(l) != "" {
				want++
			}
		}
		if len(got) != want {
			t.Fatalf("%q: %d lines, want %d", raw, len(got), want)
		}
		for _, l := range got {
			if l == "" || l != strings.TrimSpace(l) || strings.ContainsAny(l, "\r\n") {
				t.Fatalf("%q: line %q", raw, l)
			}
		}
	})
}
