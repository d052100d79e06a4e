package adapters_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/word"
)

// FuzzRecognise: any string is either refused with an error or recognised as
// a Series whose canonical address is https, on one of its Site's own hosts,
// and recognised again as the very same Series (canonical addresses are a
// fixed point). Hostile addresses never panic.
func FuzzRecognise(f *testing.F) {
	for _, s := range []string{
		"https://asurascans.com/comics/nano-machine-7f873ca6",
		"https://asurascans.com/comics/nano-machine/chapter/270",
		"https://comix.to/title/k7yg7-x/2536470-chapter-66.5",
		"https://novelfull.com/x/chapter-007-y.html",
		"https://www.lightnovelworld.com/novel/x-1365/1348-chapter-0",
		"https://asuracomic.net/series/nano-machine-7f873ca6",
		"https://novelfull.com/the-novel.html",
		"https://lightnovelworld.org/novel/some-novel/chapter-3",
		"https://comix.to/title/abc12-some-title",
		"https://kagane.org/series/0123456789ABCDEF",
		"https://demonicscans.org/manga/Some-Title",
		"https://asurascans.com.evil.test/comics/x-1234abcd",
		"http://asurascans.com/comics/x",
		"https://user:pw@novelfull.com/x.html",
		"https://[::1]/x", "javascript:alert(1)", "https://novelfull.com/%zz", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		ref, err := adapters.Recognise(raw)
		num, numOK := adapters.ChapterOf(raw)
		if numOK {
			// A chapter number comes only from a recognised address, already
			// in the canonical form every Latest Chapter is kept in.
			if canon, ok := word.ParseChapter(num); err != nil || !ok || string(canon) != num {
				t.Fatalf("ChapterOf(%q) = %q (recognised: %v)", raw, num, err)
			}
		}
		if err != nil {
			return
		}
		a, ok := adapters.ByName(ref.Site)
		if !ok || ref.SeriesID == "" {
			t.Fatalf("%q → %+v: unknown site or empty id", raw, ref)
		}
		u, perr := url.Parse(ref.URL)
		if perr != nil || u.Scheme != "https" || u.User != nil {
			t.Fatalf("%q → canonical %q is not a plain https address", raw, ref.URL)
		}
		host := strings.ToLower(u.Hostname())
		if !slices.ContainsFunc(a.Domains(), func(d string) bool { return host == d || strings.HasSuffix(host, "."+d) }) {
			t.Fatalf("%q → canonical host %q is not one of %s's", raw, host, ref.Site)
		}
		again, err := adapters.Recognise(ref.URL)
		if err != nil || again != ref {
			t.Fatalf("%q → %+v, but its canonical address → %+v, %v", raw, ref, again, err)
		}
	})
}
