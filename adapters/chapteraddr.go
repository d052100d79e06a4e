package adapters

import (
	"strings"

	"github.com/mangabookmark/mangabookmark/word"
)

// A chapter address says two things beyond its Series: the chapter's number
// (when the Site puts it in the path), and — for the Sites whose chapter
// addresses are built from the Series and the number alone — where the page
// of any chapter is. Kagane names a chapter by an opaque book id, Comix and
// NovelFull by an id or a title slug beside the number: those addresses
// cannot be built, and Kagane's carries no number at all.

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
	if n, ok := ChapterOf(raw); ok {
		c.Number = n
	}
	return c, nil
}

// ChapterURL is the address of chapter num of a Series, where the Site's
// chapter addresses can be built; false for the Sites where they cannot.
func ChapterURL(ref Ref, num string) (string, bool) {
	b, ok := registry[word.Site(ref.Site)].(chapterBuilder)
	if !ok || ref.URL == "" {
		return "", false
	}
	n, ok := chapterNumber(num)
	if !ok {
		return "", false
	}
	return b.chapterURL(ref, n), true
}

// The unsuffixed Series address redirects to the current suffixed one, and
// so does a chapter below it.
func (asurascans) chapterURL(ref Ref, num string) string { return ref.URL + "/chapter/" + num }

func (demonicscans) chapterURL(ref Ref, num string) string {
	return "https://" + demonicHost + "/title/" + ref.SeriesID + "/chapter/" + num + "/1"
}

func (lightnovelworld) chapterURL(ref Ref, num string) string {
	return ref.URL + "chapter/" + num + "/"
}

// NextChapter is the whole chapter after num ("12" and "12.5" → "13"): the
// chapter a Reader at num reads next, as far as numbers alone can tell.
func NextChapter(num string) (string, bool) {
	n, ok := chapterNumber(num)
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
	return chapterNumber(string(d))
}
