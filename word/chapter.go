package word

import (
	"cmp"
	"strings"
)

// Bounds of a chapter number. A real Series has at most a few thousand
// chapters; a longer run of digits is an id, not a number.
const (
	maxChapterDigits   = 7
	maxChapterFraction = 4 // fractional digits kept ("12.5", "100.25")
)

// Chapter is a chapter number in the canonical decimal form every Latest
// Chapter is kept in: no leading zeros, no trailing fractional zeros, no
// trailing dot ("012.50" is "12.5").
type Chapter string

// ParseChapter turns digits with an optional fraction into a Chapter. False
// when s is not a plain number within the bounds. A Poll, a Sighting and the
// owner's Correction all write this form, so one number has one spelling.
func ParseChapter(s string) (Chapter, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "+")
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return "", false
	}
	if !allDigits(intPart) || !allDigits(frac) {
		return "", false
	}
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	frac = strings.TrimRight(frac, "0")
	if len(intPart) > maxChapterDigits || len(frac) > maxChapterFraction {
		return "", false
	}
	if frac == "" {
		return Chapter(intPart), true
	}
	return Chapter(intPart + "." + frac), true
}

// Compare compares two chapter numbers numerically: -1 if c < d, 0 if equal,
// +1 if c > d. Both are read through ParseChapter first, so a stored value
// in any spelling compares by its number; an unreadable number sorts below
// every readable one, and two unreadable ones are equal. This is the one
// chapter comparison: the parsers' "highest chapter on the page", the
// poller's "does this read raise the row" and the Bookmarks' "next chapter"
// all read it.
func (c Chapter) Compare(d Chapter) int {
	a, okA := ParseChapter(string(c))
	b, okB := ParseChapter(string(d))
	switch {
	case !okA && !okB:
		return 0
	case !okA:
		return -1
	case !okB:
		return 1
	}
	ai, af, _ := strings.Cut(string(a), ".")
	bi, bf, _ := strings.Cut(string(b), ".")
	if len(ai) != len(bi) {
		return cmp.Compare(len(ai), len(bi))
	}
	if n := strings.Compare(ai, bi); n != 0 {
		return n
	}
	// Pad fractions to the same length so "5" and "25" compare as .50 and .25.
	for len(af) < len(bf) {
		af += "0"
	}
	for len(bf) < len(af) {
		bf += "0"
	}
	return strings.Compare(af, bf)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
