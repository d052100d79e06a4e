package adapters

import (
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/word"
)

func TestRecognise(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    Ref
		wantErr string // a fragment of the error, "" when the address is accepted
	}{
		// asurascans
		{"a current Asura address drops the rotating suffix", "https://asurascans.com/comics/nano-machine-7f873ca6",
			Ref{"asurascans", "nano-machine", "https://asurascans.com/comics/nano-machine"}, ""},
		{"an Asura address without suffix is the same Series", "https://www.asurascans.com/comics/nano-machine",
			Ref{"asurascans", "nano-machine", "https://asurascans.com/comics/nano-machine"}, ""},
		{"an Asura chapter page names its Series", "https://asurascans.com/comics/nano-machine-7f873ca6/chapter/270",
			Ref{"asurascans", "nano-machine", "https://asurascans.com/comics/nano-machine"}, ""},
		{"an asuracomic.net legacy address maps to the current host", "https://asuracomic.net/series/nano-machine-0b1c2d3e",
			Ref{"asurascans", "nano-machine", "https://asurascans.com/comics/nano-machine"}, ""},
		{"an asuracomic.net legacy chapter page maps to its Series", "https://asuracomic.net/series/nano-machine-0b1c2d3e/chapter/12",
			Ref{"asurascans", "nano-machine", "https://asurascans.com/comics/nano-machine"}, ""},
		{"a WordPress-era Asura address drops its numeric prefix", "https://asuratoon.com/manga/1908287720-nano-machine/",
			Ref{"asurascans", "nano-machine", "https://asurascans.com/comics/nano-machine"}, ""},
		{"the Asura home page is not a Series", "https://asurascans.com/", Ref{}, "not a Series"},
		{"a lookalike Asura host is an unknown site", "https://asurascans.com.evil.test/comics/nano-machine", Ref{}, "unknown site"},
		{"a suffix-joined lookalike host is an unknown site", "https://evilasurascans.com/comics/nano-machine", Ref{}, "unknown site"},
		{"an http Asura address is refused", "http://asurascans.com/comics/nano-machine", Ref{}, "not https"},
		{"an Asura address with user-info is refused", "https://user:pw@asurascans.com/comics/nano-machine", Ref{}, "user name"},
		// demonicscans
		{"a Demonic Scans Series page", "https://demonicscans.org/manga/Martial-Peak",
			Ref{"demonicscans", "Martial-Peak", "https://demonicscans.org/manga/Martial-Peak"}, ""},
		{"a Demonic Scans address keeps its double percent-encoding", "https://demonicscans.org/manga/Revenge-of-the-Iron%25252DBlooded-Sword-Hound",
			Ref{"demonicscans", "Revenge-of-the-Iron%25252DBlooded-Sword-Hound", "https://demonicscans.org/manga/Revenge-of-the-Iron%25252DBlooded-Sword-Hound"}, ""},
		{"a Demonic Scans chapter page names its Series", "https://demonicscans.org/title/Mr.-Magical-Girl/chapter/29/1",
			Ref{"demonicscans", "Mr.-Magical-Girl", "https://demonicscans.org/manga/Mr.-Magical-Girl"}, ""},
		{"the Demonic Scans updates page is not a Series", "https://demonicscans.org/lastupdates.php?list=1", Ref{}, "not a Series"},
		{"a Demonic Scans lookalike is an unknown site", "https://demonicscans.org.evil.test/manga/Martial-Peak", Ref{}, "unknown site"},
		{"an http Demonic Scans address is refused", "http://demonicscans.org/manga/Martial-Peak", Ref{}, "not https"},
		// comix
		{"a Comix Series page is keyed by its hid", "https://comix.to/title/k7yg7-the-spark-in-your-eyes",
			Ref{"comix", "k7yg7", "https://comix.to/title/k7yg7-the-spark-in-your-eyes"}, ""},
		{"a Comix chapter page names its Series", "https://comix.to/title/k7yg7-the-spark-in-your-eyes/2536461-chapter-66",
			Ref{"comix", "k7yg7", "https://comix.to/title/k7yg7-the-spark-in-your-eyes"}, ""},
		{"the Comix mirror maps to the main host", "https://comix.ws/title/k7yg7-the-spark-in-your-eyes",
			Ref{"comix", "k7yg7", "https://comix.to/title/k7yg7-the-spark-in-your-eyes"}, ""},
		{"the Comix browse page is not a Series", "https://comix.to/browse", Ref{}, "not a Series"},
		{"a Comix lookalike is an unknown site", "https://comix.to.evil.test/title/k7yg7-x", Ref{}, "unknown site"},
		{"a Comix address with user-info is refused", "https://a@comix.to/title/k7yg7-x", Ref{}, "user name"},
		// kagane
		{"a Kagane Series page is keyed by its UUID", "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162",
			Ref{"kagane", "019c2b1c-cc9b-745f-afed-09c230759162", "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162"}, ""},
		{"a Kagane reader page names its Series", "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162/reader/019c2bda-0000-7000-8000-000000000003",
			Ref{"kagane", "019c2b1c-cc9b-745f-afed-09c230759162", "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162"}, ""},
		{"a kagane.org legacy address with a fragment maps to kagane.to", "https://kagane.org/series/019C2B1C-CC9B-745F-AFED-09C230759162#top",
			Ref{"kagane", "019c2b1c-cc9b-745f-afed-09c230759162", "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162"}, ""},
		{"a Kagane address without a UUID is not a Series", "https://kagane.to/series/dungeon-porter", Ref{}, "not a Series"},
		{"a Kagane lookalike is an unknown site", "https://kagane.to.evil.test/series/019c2b1c-cc9b-745f-afed-09c230759162", Ref{}, "unknown site"},
		// novelfull
		{"a NovelFull novel page", "https://novelfull.com/battle-through-the-heavens.html",
			Ref{"novelfull", "battle-through-the-heavens", "https://novelfull.com/battle-through-the-heavens.html"}, ""},
		{"a NovelFull chapter page names its novel", "https://novelfull.com/battle-through-the-heavens/chapter-1-genius-no-more.html",
			Ref{"novelfull", "battle-through-the-heavens", "https://novelfull.com/battle-through-the-heavens.html"}, ""},
		{"a novelfull.net address maps to novelfull.com", "https://novelfull.net/battle-through-the-heavens.html?page=2",
			Ref{"novelfull", "battle-through-the-heavens", "https://novelfull.com/battle-through-the-heavens.html"}, ""},
		{"the NovelFull index page is not a novel", "https://novelfull.com/index.html", Ref{}, "not a Series"},
		{"a NovelFull genre page is not a novel", "https://novelfull.com/genre/Fantasy", Ref{}, "not a Series"},
		{"an http NovelFull address is refused", "http://novelfull.com/battle-through-the-heavens.html", Ref{}, "not https"},
		// lightnovelworld
		{"a LightNovelWorld novel page", "https://lightnovelworld.org/novel/shadow-slave/",
			Ref{"lightnovelworld", "shadow-slave", "https://lightnovelworld.org/novel/shadow-slave/"}, ""},
		{"a LightNovelWorld chapter page names its novel", "https://lightnovelworld.org/novel/shadow-slave/chapter/12/",
			Ref{"lightnovelworld", "shadow-slave", "https://lightnovelworld.org/novel/shadow-slave/"}, ""},
		{"a LightNovelWorld chapter list names its novel", "https://lightnovelworld.org/novel/shadow-slave/chapters/?page=3",
			Ref{"lightnovelworld", "shadow-slave", "https://lightnovelworld.org/novel/shadow-slave/"}, ""},
		{"an old lightnovelworld.com address drops its numeric id", "https://www.lightnovelworld.com/novel/shadow-slave-1365",
			Ref{"lightnovelworld", "shadow-slave", "https://lightnovelworld.org/novel/shadow-slave/"}, ""},
		{"an old lightnovelworld.co chapter page names its novel", "https://www.lightnovelworld.co/novel/shadow-slave-1365/chapter-5",
			Ref{"lightnovelworld", "shadow-slave", "https://lightnovelworld.org/novel/shadow-slave/"}, ""},
		{"the LightNovelWorld ranking page is not a novel", "https://lightnovelworld.org/ranking/", Ref{}, "not a Series"},
		{"a LightNovelWorld lookalike is an unknown site", "https://lightnovelworld.org.evil.test/novel/shadow-slave/", Ref{}, "unknown site"},
		// not addresses at all
		{"an empty string is refused", "", Ref{}, "empty"},
		{"words are not a URL", "nano machine", Ref{}, "not a URL"},
		{"a host without scheme is not a URL", "asurascans.com/comics/nano-machine", Ref{}, "not a URL"},
		{"an ftp address is refused", "ftp://asurascans.com/comics/nano-machine", Ref{}, "not https"},
		{"an unknown site is named", "https://example.com/manga/x", Ref{}, "unknown site"},
		{"a loopback address is an unknown site", "https://127.0.0.1/comics/nano-machine", Ref{}, "unknown site"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Recognise(tc.raw)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("Recognise(%q) = %+v, want an error containing %q", tc.raw, got, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Recognise(%q) error %q, want it to contain %q", tc.raw, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Recognise(%q): %v", tc.raw, err)
			}
			if got != tc.want {
				t.Errorf("Recognise(%q) = %+v, want %+v", tc.raw, got, tc.want)
			}
			// A canonical address recognises as itself.
			again, err := Recognise(got.URL)
			if err != nil || again != got {
				t.Errorf("Recognise(canonical %q) = %+v, %v; want %+v", got.URL, again, err, got)
			}
		})
	}
}

func TestEverySiteHasAnAdapter(t *testing.T) {
	for _, site := range word.SiteNames() {
		a, ok := ByName(site)
		if !ok {
			t.Fatalf("no adapter for %q", site)
		}
		if a.Site() != site {
			t.Errorf("ByName(%q).Site() = %q", site, a.Site())
		}
		if k := word.Site(a.Site()).Kind(); k != word.Manga && k != word.Novel {
			t.Errorf("%s: kind %q", site, k)
		}
		if len(a.Domains()) == 0 {
			t.Errorf("%s: no domains", site)
		}
	}
	if _, ok := ByName("mangadex"); ok {
		t.Error("ByName found an adapter for an unsupported site")
	}
}

func TestParseChapterNumber(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"Chapter 110 - Title", "110", true},
		{"Chapter 1234: Title", "1234", true},
		{"12.50", "12.5", true},
		{"12.0", "12", true},
		{"007", "7", true},
		{"Ch. 66", "66", true},
		{"Ep. 40 - Mimic Market", "40", true},
		{"C1430 End", "1430", true},
		{"Chapter 5 - Chapter 5 Title", "5", true},
		{"Volume 2 Chapter 12.5: Interlude", "12.5", true},
		{"chapter #3", "3", true},
		{"Episode 9", "9", true},
		{"Epic 5", "", false},
		{"Reach 5", "", false},
		{"Genius No More", "", false},
		{"", "", false},
		{"Chapter 99999999", "", false},
		{"-3", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := ParseChapterNumber(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("ParseChapterNumber(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestRefFromPage(t *testing.T) {
	tests := []struct {
		site, file string
		want       string // series_id, "" for none
	}{
		{"asurascans", "ongoing.html", "nano-machine"},
		{"demonicscans", "no-status.html", "I%2527m-Really-Not-The-Demon-God%2527s-Lackey"},
		{"comix", "ongoing.html", "p2m8q"},
		{"novelfull", "completed.html", "battle-through-the-heavens"},
		{"lightnovelworld", "ongoing.html", "shadow-slave"},
		{"kagane", "completed.json", "019c2b1c-cc9b-745f-afed-09c230759162"},
		{"kagane", "../challenge/cloudflare.html", ""},
		{"asurascans", "../challenge/cloudflare.html", ""},
	}
	for _, tc := range tests {
		t.Run(tc.site+" "+tc.file, func(t *testing.T) {
			ref, ok := RefFromPage(tc.site, readFixture(t, tc.site, tc.file))
			if ok != (tc.want != "") || ref.SeriesID != tc.want {
				t.Errorf("RefFromPage = %+v, %v; want series %q", ref, ok, tc.want)
			}
		})
	}
}

func TestCleanText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"whitespace runs fold and trim", "  Nano \n\t Machine  ", "Nano Machine"},
		{"control characters are dropped", "Nano\x00 Machine\x1b", "Nano Machine"},
		{"bidirectional overrides are dropped", "Nano \u202eenihcaM", "Nano enihcaM"},
		{"invalid UTF-8 is replaced", "Nano \xff", "Nano \uFFFD"},
		{"a long title is capped on a rune boundary", strings.Repeat("é", 200), strings.Repeat("é", 150)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := cleanText(tc.in, maxTitleLen); got != tc.want {
				t.Errorf("cleanText(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestDemonicChaptersMatchTheirSeriesWhateverTheEncoding(t *testing.T) {
	page := `<div id="manga-info-container"><h1 class="big-fat-titles">X</h1><div id="chapters-list">
<li><a class="chplinks" href="/title/I%27m-Really-Not/chapter/7/1">Chapter 7</a></li>
<li><a class="chplinks" href="/title/Other-Title/chapter/900/1">Chapter 900</a></li></div></div>`
	ref, err := Recognise("https://demonicscans.org/manga/I%2527m-Really-Not")
	if err != nil {
		t.Fatal(err)
	}
	f, err := demonicscans{}.Parse([]byte(page), ref)
	if err != nil || f.LatestChapter != "7" {
		t.Fatalf("Parse = %+v, %v; want chapter 7", f, err)
	}
}
