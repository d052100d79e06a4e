package word

import "strings"

// Bounds of a chapter number. A real Series has at most a few thousand
// chapters; a longer run of digits is an id, not a number.
const (
	maxChapterDigits   = 7
	maxChapterFraction = 4 // fractional digits kept ("12.5", "100.25")
)

// Chapter turns digits with an optional fraction into the canonical decimal
// every Latest Chapter is kept in: no leading zeros, no trailing fractional
// zeros, no trailing dot ("012.50" is "12.5"). False when s is not a plain
// number within the bounds. A Poll, a Sighting and the owner's Correction
// all write this form, so one number has one spelling.
func Chapter(s string) (string, bool) {
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
		return intPart, true
	}
	return intPart + "." + frac, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
