package adapters

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/word"
)

// fuzzParse runs one adapter's Parse on arbitrary bytes: it must not panic, must
// finish in bounded time, and whatever it returns must respect the Facts contract.
// The seed corpus is every fixture of the Site, every variant of it and the
// challenge page, so a plain `go test` runs it.
func fuzzParse(f *testing.F, site, seriesURL string) {
	a, ok := ByName(site)
	if !ok {
		f.Fatalf("no adapter %q", site)
	}
	ref, err := Recognise(seriesURL)
	if err != nil {
		f.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", site, "*"))
	variants, _ := filepath.Glob(filepath.Join("testdata", "variants", site, "*"))
	files = append(files, variants...)
	files = append(files, filepath.Join("testdata", "challenge", "cloudflare.html"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(""))
	f.Add([]byte("{}"))
	f.Add([]byte(`<html><body><a href="javascript:alert(1)">Chapter 9</a></body></html>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		start := time.Now()
		facts, err := a.Parse(body, ref)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Parse took %v on %d bytes", d, len(body))
		}
		if err != nil {
			return
		}
		checkFacts(t, a, facts)
	})
}

func checkFacts(t *testing.T, a Adapter, f Facts) {
	t.Helper()
	if f.Kind != word.Site(a.Site()).Kind() {
		t.Errorf("kind %q, want %q", f.Kind, word.Site(a.Site()).Kind())
	}
	if len(f.Title) > maxTitleLen || f.Title != strings.TrimSpace(f.Title) {
		t.Errorf("title not trimmed or capped: %q", f.Title)
	}
	for _, u := range []string{f.CoverURL, f.LatestChapterURL} {
		if u == "" {
			continue
		}
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || len(u) > maxURLLen {
			t.Errorf("unsafe URL in facts: %q", u)
		}
	}
	if f.HasLatest != (f.LatestChapter != "") {
		t.Errorf("HasLatest %v with LatestChapter %q", f.HasLatest, f.LatestChapter)
	}
	if f.HasLatest {
		if c, ok := word.ParseChapter(f.LatestChapter); !ok || string(c) != f.LatestChapter {
			t.Errorf("LatestChapter %q is not canonical", f.LatestChapter)
		}
	}
}

func FuzzParseAsurascans(f *testing.F) {
	fuzzParse(f, "asurascans", "https://asurascans.com/comics/nano-machine")
}

func FuzzParseDemonicscans(f *testing.F) {
	fuzzParse(f, "demonicscans", "https://demonicscans.org/manga/Martial-Peak")
}

func FuzzParseComix(f *testing.F) {
	fuzzParse(f, "comix", "https://comix.to/title/p2m8q-lookism")
}

func FuzzParseKagane(f *testing.F) {
	fuzzParse(f, "kagane", "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162")
}

func FuzzParseNovelfull(f *testing.F) {
	fuzzParse(f, "novelfull", "https://novelfull.com/reverend-insanity.html")
}

func FuzzParseLightnovelworld(f *testing.F) {
	fuzzParse(f, "lightnovelworld", "https://lightnovelworld.org/novel/shadow-slave/")
}

func FuzzParseChapterNumber(f *testing.F) {
	for _, s := range []string{"Chapter 110 - Title", "12.50", "C1430", "Ep. 40", "", "Chapter 0007.000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := ParseChapterNumber(s)
		if !ok {
			return
		}
		if c, ok2 := word.ParseChapter(n); !ok2 || string(c) != n {
			t.Fatalf("ParseChapterNumber(%q) = %q, not canonical", s, n)
		}
		if word.Chapter(n).Compare(word.Chapter(n)) != 0 {
			t.Fatalf("Compare(%q, itself) != 0", n)
		}
	})
}
