package adapters

import (
	"regexp"
	"strings"

	"github.com/mangabookmark/mangabookmark/word"
)

// chapterWord finds "Chapter 110", "Ch. 12.5", "Ep. 40", "C1234" and the like: a
// chapter word that starts a word, optional dot and spaces, then the number.
var chapterWord = regexp.MustCompile(`(?i)\b(?:chapter|chap|ch|episode|ep|c)\.?\s*[#:]?\s*(\d+(?:\.\d+)?)`)

// bareNumber is a label that is only a number ("110", "12.50").
var bareNumber = regexp.MustCompile(`^\s*(\d+(?:\.\d+)?)\s*$`)

// ParseChapterNumber reads the chapter number of a label: "Chapter 110 - Title" →
// "110", "Chapter 1234: Title" → "1234", "12.50" → "12.5". It reads the number
// after the first chapter word, or a label that is a bare number; the rest of the
// label (which may hold its own numbers) is ignored.
func ParseChapterNumber(s string) (string, bool) {
	if len(s) > 4096 {
		s = s[:4096]
	}
	if m := chapterWord.FindStringSubmatch(s); m != nil {
		return word.Chapter(m[1])
	}
	if m := bareNumber.FindStringSubmatch(s); m != nil {
		return word.Chapter(m[1])
	}
	return "", false
}

// canonicalFloat formats a JSON number (which may be written 270, 270.0 or 12.5)
// as a canonical decimal. It works on the literal text, so no float rounding
// creeps in.
func canonicalFloat(lit string) (string, bool) {
	lit = strings.TrimSpace(lit)
	if strings.ContainsAny(lit, "eE-") {
		return "", false
	}
	return word.Chapter(lit)
}

// CompareChapters compares two chapter numbers numerically: -1 if a < b, 0 if
// equal, +1 if a > b. Inputs are canonicalised first; an unreadable number sorts
// below every readable one.
func CompareChapters(a, b string) int {
	ca, okA := word.Chapter(a)
	cb, okB := word.Chapter(b)
	switch {
	case !okA && !okB:
		return 0
	case !okA:
		return -1
	case !okB:
		return 1
	}
	ai, af, _ := strings.Cut(ca, ".")
	bi, bf, _ := strings.Cut(cb, ".")
	if len(ai) != len(bi) {
		return sign(len(ai) - len(bi))
	}
	if c := strings.Compare(ai, bi); c != 0 {
		return c
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

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// latest keeps the highest chapter seen so far and its address, for one
// Site's page: every adapter's chapters pass through offer.
type latest struct {
	site     Adapter
	num, url string
}

// offer considers one chapter; a higher number replaces the kept one. On a tie the
// first address seen stays. A chapter address on a host that is not the Site's
// (a comment, an ad, a lookalike) is not this Series' chapter at all.
func (l *latest) offer(num, u string) {
	// The host is read only for a number that would be kept: a lower one is
	// dropped whatever its host, so the order of the two checks changes
	// nothing but the work.
	if !l.wins(num) || offSite(l.site, u) {
		return
	}
	l.num, l.url = num, u
}

// wins says whether num would replace the kept chapter.
func (l *latest) wins(num string) bool {
	return num != "" && (l.num == "" || CompareChapters(num, l.num) > 0)
}

// into writes the kept chapter into f.
func (l *latest) into(f *Facts) {
	if l.num == "" {
		return
	}
	f.LatestChapter, f.LatestChapterURL, f.HasLatest = l.num, l.url, true
}
