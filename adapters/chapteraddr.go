package adapters

import (
	"net/url"
	"regexp"
	"strings"
)

// A chapter address says two things beyond its Series: the chapter's number
// (when the Site puts it in the path), and — for the Sites whose chapter
// addresses are built from the Series and the number alone — where the page
// of any chapter is. Kagane names a chapter by an opaque book id, Comix and
// NovelFull by an id or a title slug beside the number: those addresses
// cannot be built, and Kagane's carries no number at all.

// chapterAddresser is implemented by adapters whose chapter addresses carry
// their number.
type chapterAddresser interface {
	chapterNumber(seg []string) (string, bool)
}

// chapterBuilder is implemented by adapters whose chapter address is the
// Series address plus the number.
type chapterBuilder interface {
	chapterURL(ref Ref, num string) string
}

// Chapter is what Recognise learns from one address: the Series, and the
// chapter number when the address is a chapter page that carries one.
type Chapter struct {
	Ref
	Number string // canonical decimal; "" for a Series page or a chapter page without a number
}

// RecogniseChapter is Recognise plus the chapter number the address names.
func RecogniseChapter(raw string) (Chapter, error) {
	ref, err := Recognise(raw)
	if err != nil {
		return Chapter{}, err
	}
	c := Chapter{Ref: ref}
	u, _ := url.Parse(strings.TrimSpace(raw)) // Recognise parsed it already
	if ca, ok := registry[ref.Site].(chapterAddresser); ok {
		if n, ok := ca.chapterNumber(pathSegments(u)); ok {
			c.Number = n
		}
	}
	return c, nil
}

// ChapterURL is the address of chapter num of a Series, where the Site's
// chapter addresses can be built; false for the Sites where they cannot.
func ChapterURL(ref Ref, num string) (string, bool) {
	b, ok := registry[ref.Site].(chapterBuilder)
	if !ok || ref.URL == "" {
		return "", false
	}
	n, ok := canonicalNumber(num)
	if !ok {
		return "", false
	}
	return b.chapterURL(ref, n), true
}

// /comics/<slug>/chapter/<n> and /series/<slug>-<hex>/chapter/<n>.
func (asurascans) chapterNumber(seg []string) (string, bool) {
	if len(seg) >= 4 && seg[2] == "chapter" {
		return canonicalNumber(seg[3])
	}
	return "", false
}

// The unsuffixed Series address redirects to the current suffixed one, and
// so does a chapter below it.
func (asurascans) chapterURL(ref Ref, num string) string { return ref.URL + "/chapter/" + num }

// /title/<Title>/chapter/<n>[/<page>].
func (demonicscans) chapterNumber(seg []string) (string, bool) {
	if len(seg) >= 4 && seg[0] == "title" && seg[2] == "chapter" {
		return canonicalNumber(seg[3])
	}
	return "", false
}

func (demonicscans) chapterURL(ref Ref, num string) string {
	return "https://" + demonicHost + "/title/" + ref.SeriesID + "/chapter/" + num + "/1"
}

// /title/<hid>-<slug>/<id>-chapter-<n>.
func (comix) chapterNumber(seg []string) (string, bool) {
	if len(seg) == 3 {
		if m := comixChapterPath.FindStringSubmatch(seg[2]); m != nil {
			return canonicalNumber(m[1])
		}
	}
	return "", false
}

// novelfullChapter reads /<slug>/chapter-<n>-<title words>.html. Only the
// integer is read: "chapter-12-5-x" is chapter 12 with a title starting "5".
var novelfullChapter = regexp.MustCompile(`^chapter-(\d+)(?:-|\.html$)`)

func (novelfull) chapterNumber(seg []string) (string, bool) {
	if len(seg) == 2 {
		if m := novelfullChapter.FindStringSubmatch(seg[1]); m != nil {
			return canonicalNumber(m[1])
		}
	}
	return "", false
}

// lnwOldChapter is the old sites' /novel/<slug>-<id>/chapter-<n>.
var lnwOldChapter = regexp.MustCompile(`^chapter-(\d+(?:\.\d+)?)$`)

// /novel/<slug>/chapter/<n>/ (current) and /novel/<slug>-<id>/chapter-<n> (old).
func (lightnovelworld) chapterNumber(seg []string) (string, bool) {
	switch {
	case len(seg) >= 4 && seg[2] == "chapter":
		return canonicalNumber(seg[3])
	case len(seg) == 3:
		if m := lnwOldChapter.FindStringSubmatch(seg[2]); m != nil {
			return canonicalNumber(m[1])
		}
	}
	return "", false
}

func (lightnovelworld) chapterURL(ref Ref, num string) string {
	return ref.URL + "chapter/" + num + "/"
}

// NextChapter is the whole chapter after num ("12" and "12.5" → "13"): the
// chapter a Reader at num reads next, as far as numbers alone can tell.
func NextChapter(num string) (string, bool) {
	n, ok := canonicalNumber(num)
	if !ok {
		return "", false
	}
	whole, _, _ := strings.Cut(n, ".")
	d := []byte(whole)
	for i := len(d) - 1; ; i-- {
		if i < 0 {
			d = append([]byte{'1'}, d...)
			break
		}
		if d[i] < '9' {
			d[i]++
			break
		}
		d[i] = '0'
	}
	return canonicalNumber(string(d))
}
