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
		return chapterNumber(m[1])
	}
	if m := bareNumber.FindStringSubmatch(s); m != nil {
		return chapterNumber(m[1])
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
	return chapterNumber(lit)
}

// chapterNumber is word.ParseChapter in the plain string the Facts carry.
func chapterNumber(s string) (string, bool) {
	c, ok := word.ParseChapter(s)
	return string(c), ok
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
	return num != "" && (l.num == "" || word.Chapter(num).Compare(word.Chapter(l.num)) > 0)
}

// into writes the kept chapter into f.
func (l *latest) into(f *Facts) {
	if l.num == "" {
		return
	}
	f.LatestChapter, f.LatestChapterURL, f.HasLatest = l.num, l.url, true
}
