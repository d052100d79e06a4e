package adapters_test

import (
	"testing"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/word"
)

func TestAChapterAddressNamesItsSeriesAndItsNumber(t *testing.T) {
	tests := []struct {
		name, raw        string
		site, id, number string
	}{
		{"an Asura chapter page", "https://asurascans.com/comics/nano-machine-7f873ca6/chapter/270", "asurascans", "nano-machine", "270"},
		{"a legacy Asura chapter page", "https://asuracomic.net/series/nano-machine-0b1c2d3e/chapter/12.5", "asurascans", "nano-machine", "12.5"},
		{"an Asura Series page has no number", "https://asurascans.com/comics/nano-machine", "asurascans", "nano-machine", ""},
		{"a Demonic Scans chapter page with its page number", "https://demonicscans.org/title/Martial-Peak/chapter/3670/1", "demonicscans", "Martial-Peak", "3670"},
		{"a Comix chapter page", "https://comix.to/title/p2m8q-lookism/2601002-chapter-540", "comix", "p2m8q", "540"},
		{"a Kagane reader page carries no number", "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162/reader/019c2bda-0000-7000-8000-000000000003", "kagane", "019c2b1c-cc9b-745f-afed-09c230759162", ""},
		{"a NovelFull chapter page reads the integer only", "https://novelfull.com/reverend-insanity/chapter-2333-gu.html", "novelfull", "reverend-insanity", "2333"},
		{"a NovelFull chapter page with no title", "https://novelfull.com/reverend-insanity/chapter-7.html", "novelfull", "reverend-insanity", "7"},
		{"a LightNovelWorld chapter page", "https://lightnovelworld.org/novel/shadow-slave/chapter/012/", "lightnovelworld", "shadow-slave", "12"},
		{"an old LightNovelWorld chapter page", "https://www.lightnovelworld.co/novel/shadow-slave-1365/chapter-5", "lightnovelworld", "shadow-slave", "5"},
		{"a LightNovelWorld chapter list is not a chapter", "https://lightnovelworld.org/novel/shadow-slave/chapters/?page=3", "lightnovelworld", "shadow-slave", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := adapters.RecogniseChapter(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			if c.Site != tc.site || c.SeriesID != tc.id || c.Number != tc.number {
				t.Errorf("got %s/%s chapter %q, want %s/%s chapter %q", c.Site, c.SeriesID, c.Number, tc.site, tc.id, tc.number)
			}
		})
	}
	if _, err := adapters.RecogniseChapter("https://example.com/chapter/3"); err == nil {
		t.Error("an unknown Site's address was recognised")
	}
}

func TestAChapterAddressIsBuiltOnlyWhereTheSiteAllowsIt(t *testing.T) {
	tests := []struct {
		name, series, num, want string
	}{
		{"Asura builds below the Series address", "https://asurascans.com/comics/nano-machine", "271", "https://asurascans.com/comics/nano-machine/chapter/271"},
		{"Demonic Scans builds its first page", "https://demonicscans.org/manga/Martial-Peak", "3671", "https://demonicscans.org/title/Martial-Peak/chapter/3671/1"},
		{"LightNovelWorld builds below the novel", "https://lightnovelworld.org/novel/shadow-slave/", "13.5", "https://lightnovelworld.org/novel/shadow-slave/chapter/13.5/"},
		{"Comix needs an id it cannot know", "https://comix.to/title/p2m8q-lookism", "541", ""},
		{"Kagane names chapters by book id", "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162", "2", ""},
		{"NovelFull needs the chapter's title", "https://novelfull.com/reverend-insanity.html", "8", ""},
		{"a number that is not a chapter builds nothing", "https://asurascans.com/comics/nano-machine", "../x", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := adapters.Recognise(tc.series)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := adapters.ChapterURL(ref, tc.num)
			if got != tc.want || ok != (tc.want != "") {
				t.Fatalf("ChapterURL = %q, %v; want %q", got, ok, tc.want)
			}
			if !ok {
				return
			}
			// A built address recognises as the same Series and chapter.
			c, err := adapters.RecogniseChapter(got)
			if err != nil || c.Ref != ref || c.Number == "" {
				t.Errorf("built %q recognises as %+v, %v", got, c, err)
			}
		})
	}
}

// FuzzRecogniseChapter: a recognised address's number, when it has one, is
// canonical, and a Series page's own canonical address carries none.
func FuzzRecogniseChapter(f *testing.F) {
	for _, s := range []string{
		"https://asurascans.com/comics/x-7f873ca6/chapter/270",
		"https://demonicscans.org/title/A/chapter/3.5/2",
		"https://comix.to/title/abc12-x/1-chapter-9",
		"https://novelfull.com/x/chapter-1-a.html",
		"https://lightnovelworld.org/novel/x/chapter/0007/",
		"https://lightnovelworld.co/novel/x-123/chapter-5",
		"https://asurascans.com/comics/x/chapter/99999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := adapters.RecogniseChapter(raw)
		if err != nil {
			return
		}
		if c.Number != "" {
			if n, ok := word.ParseChapter(c.Number); !ok || string(n) != c.Number {
				t.Fatalf("%q: number %q is not canonical", raw, c.Number)
			}
		}
		again, err := adapters.RecogniseChapter(c.URL)
		if err != nil || again.Ref != c.Ref || again.Number != "" {
			t.Fatalf("%q: its Series address %q → %+v, %v", raw, c.URL, again, err)
		}
	})
}

func TestTheNextChapterIsTheWholeOneAfter(t *testing.T) {
	for in, want := range map[string]string{"12": "13", "12.5": "13", "0": "1", "99": "100", "1999.9": "2000", "9999999": ""} {
		got, ok := adapters.NextChapter(in)
		if got != want || ok != (want != "") {
			t.Errorf("NextChapter(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
