package adapters

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/word"
)

// fixtureCase is one stored page of one Site and the facts it must yield.
type fixtureCase struct {
	name    string
	site    string
	file    string // under testdata/<site>/
	url     string // the Series address the page belongs to
	want    Facts
	wantErr bool // the page is not the Site's Series page at all
}

var fixtureCases = []fixtureCase{
	{
		name: "an Asura series marked completed is completed",
		site: "asurascans", file: "completed.html",
		url: "https://asurascans.com/comics/the-dark-mage-returns",
		want: Facts{
			Title: "The Dark Mage Returns to Enlistment", Kind: word.Manga,
			CoverURL:      "https://cdn.asurascans.com/covers/the-dark-mage-returns.webp",
			LatestChapter: "112", LatestChapterURL: "https://asurascans.com/comics/the-dark-mage-returns/chapter/112",
			HasLatest: true, Completed: true,
		},
	},
	{
		name: "an ongoing Asura series ignores a locked chapter and the popular sidebar",
		site: "asurascans", file: "ongoing.html",
		url: "https://asurascans.com/comics/nano-machine",
		want: Facts{
			Title: "Nano Machine", Kind: word.Manga,
			CoverURL:      "https://cdn.asurascans.com/covers/nano-machine.webp",
			LatestChapter: "271", LatestChapterURL: "https://asurascans.com/comics/nano-machine/chapter/271",
			HasLatest: true,
		},
	},
	{
		name: "an Asura page without a status is not completed",
		site: "asurascans", file: "no-status.html",
		url: "https://asurascans.com/comics/swordmasters-youngest-son",
		want: Facts{
			Title: "Swordmaster's Youngest Son", Kind: word.Manga,
			CoverURL:      "https://cdn.asurascans.com/covers/swordmasters-youngest-son.webp",
			LatestChapter: "150", LatestChapterURL: "https://asurascans.com/comics/swordmasters-youngest-son/chapter/150",
			HasLatest: true,
		},
	},
	{
		name: "an Asura series with no chapters has no latest chapter",
		site: "asurascans", file: "no-chapters.html",
		url: "https://asurascans.com/comics/coming-soon-title",
		want: Facts{
			Title: "A Title Coming Soon", Kind: word.Manga,
			CoverURL: "https://cdn.asurascans.com/covers/coming-soon-title.webp",
		},
	},
	{
		name: "an Asura series takes the highest of decimal, out-of-order chapters and decodes a double-escaped title",
		site: "asurascans", file: "decimal.html",
		url: "https://asurascans.com/comics/omniscient-readers-viewpoint",
		want: Facts{
			Title: "Omniscient Reader's Viewpoint & Friends", Kind: word.Manga,
			CoverURL:      "https://cdn.asurascans.com/covers/omniscient-readers-viewpoint.webp",
			LatestChapter: "12.5", LatestChapterURL: "https://asurascans.com/comics/omniscient-readers-viewpoint/chapter/12.5",
			HasLatest: true,
		},
	},
	{
		name: "a challenge page is not an Asura series page",
		site: "asurascans", file: "../challenge/cloudflare.html",
		url:     "https://asurascans.com/comics/nano-machine",
		wantErr: true,
	},
	// demonicscans
	{
		name: "a Demonic Scans series marked Completed is completed",
		site: "demonicscans", file: "completed.html",
		url: "https://demonicscans.org/manga/Mr.-Magical-Girl",
		want: Facts{
			Title: "Mr. Magical Girl", Kind: word.Manga,
			CoverURL:      "https://demoniclibs.com/images/covers/Mr.-Magical-Girl.jpg",
			LatestChapter: "88", LatestChapterURL: "https://demonicscans.org/title/Mr.-Magical-Girl/chapter/88/1",
			HasLatest: true, Completed: true,
		},
	},
	{
		name: "an ongoing Demonic Scans series ignores the popular sidebar's chapter",
		site: "demonicscans", file: "ongoing.html",
		url: "https://demonicscans.org/manga/Martial-Peak",
		want: Facts{
			Title: "Martial Peak", Kind: word.Manga,
			CoverURL:      "https://demoniclibs.com/images/covers/Martial-Peak.jpg",
			LatestChapter: "3671", LatestChapterURL: "https://demonicscans.org/title/Martial-Peak/chapter/3671/1",
			HasLatest: true,
		},
	},
	{
		name: "a Demonic Scans page without its Status row is not completed and keeps percent-encoding",
		site: "demonicscans", file: "no-status.html",
		url: "https://demonicscans.org/manga/I%2527m-Really-Not-The-Demon-God%2527s-Lackey",
		want: Facts{
			Title: "I'm Really Not The Demon God's Lackey", Kind: word.Manga,
			CoverURL:      "https://demoniclibs.com/images/covers/I%2527m-Really-Not-The-Demon-God%2527s-Lackey.jpg",
			LatestChapter: "120", LatestChapterURL: "https://demonicscans.org/title/I%2527m-Really-Not-The-Demon-God%2527s-Lackey/chapter/120/1",
			HasLatest: true,
		},
	},
	{
		name: "a Demonic Scans series with no chapters has no latest chapter",
		site: "demonicscans", file: "no-chapters.html",
		url: "https://demonicscans.org/manga/Revenge-of-the-Iron%25252DBlooded-Sword-Hound",
		want: Facts{
			Title: "Revenge of the Iron-Blooded Sword Hound", Kind: word.Manga,
			CoverURL: "https://demoniclibs.com/images/covers/Revenge-of-the-Iron%25252DBlooded-Sword-Hound.jpg",
		},
	},
	{
		name: "a Demonic Scans series takes the highest of decimal, out-of-order chapters",
		site: "demonicscans", file: "decimal.html",
		url: "https://demonicscans.org/manga/Tales-of-Demons-and-Gods",
		want: Facts{
			Title: "Tales of Demons & Gods", Kind: word.Manga,
			CoverURL:      "https://demoniclibs.com/images/covers/Tales-of-Demons-and-Gods.jpg",
			LatestChapter: "480.5", LatestChapterURL: "https://demonicscans.org/title/Tales-of-Demons-and-Gods/chapter/480.5/1",
			HasLatest: true,
		},
	},
	{
		name: "a challenge page is not a Demonic Scans series page",
		site: "demonicscans", file: "../challenge/cloudflare.html",
		url: "https://demonicscans.org/manga/Martial-Peak", wantErr: true,
	},
	// comix
	{
		name: "a Comix series whose status is finished is completed, and duplicate group rows count once",
		site: "comix", file: "completed.html",
		url: "https://comix.to/title/k7yg7-the-spark-in-your-eyes",
		want: Facts{
			Title: "The Spark in Your Eyes", Kind: word.Manga,
			CoverURL:      "https://static.comix.to/k7yg7/poster-l.webp",
			LatestChapter: "66", LatestChapterURL: "https://comix.to/title/k7yg7-the-spark-in-your-eyes/2536461-chapter-66",
			HasLatest: true, Completed: true,
		},
	},
	{
		name: "a releasing Comix series ignores the related strip's chapter",
		site: "comix", file: "ongoing.html",
		url: "https://comix.to/title/p2m8q-lookism",
		want: Facts{
			Title: "Lookism", Kind: word.Manga,
			CoverURL:      "https://static.comix.to/p2m8q/poster-l.webp",
			LatestChapter: "541", LatestChapterURL: "https://comix.to/title/p2m8q-lookism/2601113-chapter-541",
			HasLatest: true,
		},
	},
	{
		name: "a Comix detail without a status is not completed",
		site: "comix", file: "no-status.html",
		url: "https://comix.to/title/a1b2c-eleceed",
		want: Facts{
			Title: "Eleceed", Kind: word.Manga,
			CoverURL:      "https://static.comix.to/a1b2c/poster-l.webp",
			LatestChapter: "330", LatestChapterURL: "https://comix.to/title/a1b2c-eleceed/2600010-chapter-330",
			HasLatest: true,
		},
	},
	{
		name: "a Comix series not yet released has no chapters and is not completed",
		site: "comix", file: "no-chapters.html",
		url: "https://comix.to/title/n0ch4-upcoming-thing",
		want: Facts{
			Title: "Upcoming Thing", Kind: word.Manga,
			CoverURL: "https://static.comix.to/n0ch4/poster-l.webp",
		},
	},
	{
		name: "a Comix series on hiatus takes the highest of decimal, out-of-order chapters",
		site: "comix", file: "decimal.html",
		url: "https://comix.to/title/d3c1m-omega-gate",
		want: Facts{
			Title: "Omega Gate", Kind: word.Manga,
			CoverURL:      "https://static.comix.to/d3c1m/poster-l.webp",
			LatestChapter: "20.5", LatestChapterURL: "https://comix.to/title/d3c1m-omega-gate/2500005-chapter-20.5",
			HasLatest: true,
		},
	},
	{
		name: "a challenge page is not a Comix series page",
		site: "comix", file: "../challenge/cloudflare.html",
		url: "https://comix.to/title/k7yg7-the-spark-in-your-eyes", wantErr: true,
	},
	// kagane
	{
		name: "a Kagane series whose publication status is Completed is completed",
		site: "kagane", file: "completed.json",
		url: "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162",
		want: Facts{
			Title: "Dungeon Porter", Kind: word.Manga,
			CoverURL:      "https://kagane.to/api/v2/image/019c2b1c-aaaa-7bbb-8ccc-0d0e0f101112",
			LatestChapter: "40", LatestChapterURL: "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162/reader/019c2bda-0000-7000-8000-000000000003",
			HasLatest: true, Completed: true,
		},
	},
	{
		name: "an ongoing Kagane series reads chapter numbers from titles when chapter_no is empty",
		site: "kagane", file: "ongoing.json",
		url: "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162",
		want: Facts{
			Title: "Dungeon Porter", Kind: word.Manga,
			CoverURL:      "https://kagane.to/api/v2/image/019c2b1c-aaaa-7bbb-8ccc-0d0e0f101112",
			LatestChapter: "14", LatestChapterURL: "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162/reader/019c2bda-0000-7000-8000-000000000003",
			HasLatest: true,
		},
	},
	{
		name: "a Kagane body without status keys is not completed",
		site: "kagane", file: "no-status.json",
		url: "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162",
		want: Facts{
			Title: "Dungeon Porter", Kind: word.Manga,
			CoverURL:      "https://kagane.to/api/v2/image/019c2b1c-aaaa-7bbb-8ccc-0d0e0f101112",
			LatestChapter: "5", LatestChapterURL: "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162/reader/019c2bda-0000-7000-8000-000000000001",
			HasLatest: true,
		},
	},
	{
		name: "a Kagane series with no books has no latest chapter and its title is unescaped once",
		site: "kagane", file: "no-chapters.json",
		url: "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162",
		want: Facts{
			Title: "Dungeon Porter & Friends", Kind: word.Manga,
			CoverURL: "https://kagane.to/api/v2/image/019c2b1c-aaaa-7bbb-8ccc-0d0e0f101112",
		},
	},
	{
		name: "a Kagane series takes the highest of decimal, out-of-order books",
		site: "kagane", file: "decimal.json",
		url: "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162",
		want: Facts{
			Title: "Dungeon Porter", Kind: word.Manga,
			CoverURL:      "https://kagane.to/api/v2/image/019c2b1c-aaaa-7bbb-8ccc-0d0e0f101112",
			LatestChapter: "11.25", LatestChapterURL: "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162/reader/019c2bda-0000-7000-8000-000000000004",
			HasLatest: true,
		},
	},
	{
		name: "a Kagane work still ongoing is not completed although its upload is completed",
		site: "kagane", file: "work-ongoing-upload-completed.json",
		url: "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162",
		want: Facts{
			Title: "Dungeon Porter", Kind: word.Manga,
			CoverURL:      "https://kagane.to/api/v2/image/019c2b1c-aaaa-7bbb-8ccc-0d0e0f101112",
			LatestChapter: "2", LatestChapterURL: "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162/reader/019c2bda-0000-7000-8000-000000000002",
			HasLatest: true,
		},
	},
	{
		name: "a Kagane work completed is completed although its upload is ongoing",
		site: "kagane", file: "work-completed-upload-ongoing.json",
		url: "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162",
		want: Facts{
			Title: "Dungeon Porter", Kind: word.Manga,
			CoverURL:      "https://kagane.to/api/v2/image/019c2b1c-aaaa-7bbb-8ccc-0d0e0f101112",
			LatestChapter: "2", LatestChapterURL: "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162/reader/019c2bda-0000-7000-8000-000000000002",
			HasLatest: true, Completed: true,
		},
	},
	{
		name: "a challenge page is not a Kagane API body",
		site: "kagane", file: "../challenge/cloudflare.html",
		url: "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162", wantErr: true,
	},
	// novelfull
	{
		name: "a NovelFull novel whose status link says Completed is completed",
		site: "novelfull", file: "completed.html",
		url: "https://novelfull.com/battle-through-the-heavens.html",
		want: Facts{
			Title: "Battle Through the Heavens", Kind: word.Novel,
			CoverURL:      "https://novelfull.com/uploads/thumbs/battle-through-the-heavens-2a3b4c.jpg",
			LatestChapter: "1648", LatestChapterURL: "https://novelfull.com/battle-through-the-heavens/chapter-1648-the-end.html",
			HasLatest: true, Completed: true,
		},
	},
	{
		name: "an ongoing NovelFull novel ignores the hot-novels sidebar's chapter",
		site: "novelfull", file: "ongoing.html",
		url: "https://novelfull.com/reverend-insanity.html",
		want: Facts{
			Title: "Reverend Insanity", Kind: word.Novel,
			CoverURL:      "https://novelfull.com/uploads/thumbs/reverend-insanity-2a3b4c.jpg",
			LatestChapter: "2334", LatestChapterURL: "https://novelfull.com/reverend-insanity/chapter-2334-spring-autumn.html",
			HasLatest: true,
		},
	},
	{
		name: "a NovelFull page without its Status row is not completed",
		site: "novelfull", file: "no-status.html",
		url: "https://novelfull.com/lord-of-the-mysteries.html",
		want: Facts{
			Title: "Lord of the Mysteries", Kind: word.Novel,
			CoverURL:      "https://novelfull.com/uploads/thumbs/lord-of-the-mysteries-2a3b4c.jpg",
			LatestChapter: "1430", LatestChapterURL: "https://novelfull.com/lord-of-the-mysteries/chapter-1430-end.html",
			HasLatest: true,
		},
	},
	{
		name: "a NovelFull novel with no chapters has no latest chapter",
		site: "novelfull", file: "no-chapters.html",
		url: "https://novelfull.com/a-brand-new-novel.html",
		want: Facts{
			Title: "A Brand New Novel", Kind: word.Novel,
			CoverURL: "https://novelfull.com/uploads/thumbs/a-brand-new-novel-2a3b4c.jpg",
		},
	},
	{
		name: "a NovelFull novel takes the highest of decimal, out-of-order chapters",
		site: "novelfull", file: "decimal.html",
		url: "https://novelfull.com/versatile-mage.html",
		want: Facts{
			Title: "Versatile Mage", Kind: word.Novel,
			CoverURL:      "https://novelfull.com/uploads/thumbs/versatile-mage-2a3b4c.jpg",
			LatestChapter: "3021.5", LatestChapterURL: "https://novelfull.com/versatile-mage/chapter-3021-5-interlude.html",
			HasLatest: true,
		},
	},
	{
		name: "a challenge page is not a NovelFull novel page",
		site: "novelfull", file: "../challenge/cloudflare.html",
		url: "https://novelfull.com/reverend-insanity.html", wantErr: true,
	},
	// lightnovelworld
	{
		name: "a LightNovelWorld novel whose creative-work status is the completed action status is completed",
		site: "lightnovelworld", file: "completed.html",
		url: "https://lightnovelworld.org/novel/the-legendary-mechanic/",
		want: Facts{
			Title: "The Legendary Mechanic", Kind: word.Novel,
			CoverURL:      "https://lightnovelworld.org/static/covers/the-legendary-mechanic.webp",
			LatestChapter: "1463", LatestChapterURL: "https://lightnovelworld.org/novel/the-legendary-mechanic/chapter/1463/",
			HasLatest: true, Completed: true,
		},
	},
	{
		name: "an active LightNovelWorld novel trusts the address's number and ignores recommendations",
		site: "lightnovelworld", file: "ongoing.html",
		url: "https://lightnovelworld.org/novel/shadow-slave/",
		want: Facts{
			Title: "Shadow Slave", Kind: word.Novel,
			CoverURL:      "https://lightnovelworld.org/static/covers/shadow-slave.webp",
			LatestChapter: "2450", LatestChapterURL: "https://lightnovelworld.org/novel/shadow-slave/chapter/2450/",
			HasLatest: true,
		},
	},
	{
		name: "a LightNovelWorld Book without a creative-work status is not completed whatever its badge says",
		site: "lightnovelworld", file: "no-status.html",
		url: "https://lightnovelworld.org/novel/super-gene/",
		want: Facts{
			Title: "Super Gene", Kind: word.Novel,
			CoverURL:      "https://lightnovelworld.org/static/covers/super-gene.webp",
			LatestChapter: "3462", LatestChapterURL: "https://lightnovelworld.org/novel/super-gene/chapter/3462/",
			HasLatest: true,
		},
	},
	{
		name: "a LightNovelWorld novel with no chapters has no latest chapter and its title is unescaped once",
		site: "lightnovelworld", file: "no-chapters.html",
		url: "https://lightnovelworld.org/novel/a-novel-with-nothing-yet/",
		want: Facts{
			Title: "A Novel With Nothing Yet & More", Kind: word.Novel,
			CoverURL: "https://lightnovelworld.org/static/covers/a-novel-with-nothing-yet.webp",
		},
	},
	{
		name: "a LightNovelWorld novel takes the highest of decimal, out-of-order chapters",
		site: "lightnovelworld", file: "decimal.html",
		url: "https://lightnovelworld.org/novel/omniscient-readers-viewpoint/",
		want: Facts{
			Title: "Omniscient Reader's Viewpoint", Kind: word.Novel,
			CoverURL:      "https://lightnovelworld.org/static/covers/omniscient-readers-viewpoint.webp",
			LatestChapter: "551.5", LatestChapterURL: "https://lightnovelworld.org/novel/omniscient-readers-viewpoint/chapter/551.5/",
			HasLatest: true,
		},
	},
	{
		name: "a challenge page is not a LightNovelWorld novel page",
		site: "lightnovelworld", file: "../challenge/cloudflare.html",
		url: "https://lightnovelworld.org/novel/shadow-slave/", wantErr: true,
	},
}

func readFixture(t testing.TB, site, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", site, file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseFixtures(t *testing.T) {
	for _, tc := range fixtureCases {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := ByName(tc.site)
			if !ok {
				t.Fatalf("no adapter %q", tc.site)
			}
			ref, err := Recognise(tc.url)
			if err != nil {
				t.Fatalf("Recognise(%q): %v", tc.url, err)
			}
			got, err := a.Parse(readFixture(t, tc.site, tc.file), ref)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Parse = %+v, want an error", got)
				}
				if !errors.Is(err, ErrNotSeries) {
					t.Fatalf("Parse error %v does not wrap ErrNotSeries", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got != tc.want {
				t.Errorf("Parse =\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}

func TestAChapterLinkOnAnotherHostIsNotAChapter(t *testing.T) {
	for _, tc := range []struct{ site, file, series, latestURL string }{
		{"novelfull", "ongoing.html", "https://novelfull.com/reverend-insanity.html", "https://novelfull.com/reverend-insanity/chapter-2334-spring-autumn.html"},
		{"novelfull", "../variants/novelfull/absolute-links.html", "https://novelfull.com/battle-through-the-heavens.html", "https://novelfull.com/battle-through-the-heavens/chapter-1648-the-end.html"},
		{"demonicscans", "ongoing.html", "https://demonicscans.org/manga/Martial-Peak", "https://demonicscans.org/title/Martial-Peak/chapter/3671/1"},
		{"demonicscans", "../variants/demonicscans/list-after-footer.html", "https://demonicscans.org/manga/Mr.-Magical-Girl", "https://demonicscans.org/title/Mr.-Magical-Girl/chapter/88/1"},
		{"comix", "ongoing.html", "https://comix.to/title/p2m8q-lookism", "https://comix.to/title/p2m8q-lookism/2601113-chapter-541"},
		{"lightnovelworld", "ongoing.html", "https://lightnovelworld.org/novel/shadow-slave/", "https://lightnovelworld.org/novel/shadow-slave/chapter/2450/"},
		{"lightnovelworld", "../variants/lightnovelworld/chapter-links.html", "https://lightnovelworld.org/novel/the-legendary-mechanic/", "https://lightnovelworld.org/novel/the-legendary-mechanic/chapter/1463/"},
		{"asurascans", "../variants/asurascans/html-rows.html", "https://asurascans.com/comics/the-dark-mage-returns", "https://asurascans.com/comics/the-dark-mage-returns/chapter/112"},
	} {
		t.Run(tc.site+"/"+tc.file, func(t *testing.T) {
			a, _ := ByName(tc.site)
			ref, err := Recognise(tc.series)
			if err != nil {
				t.Fatal(err)
			}
			page := string(readFixture(t, tc.site, tc.file))
			before, err := a.Parse([]byte(page), ref)
			if err != nil || before.LatestChapterURL != tc.latestURL {
				t.Fatalf("fixture's latest chapter is %q (%v), want %q", before.LatestChapterURL, err, tc.latestURL)
			}
			// The newest chapter's link now points at a lookalike host, in
			// whatever form the page wrote it.
			u, _ := url.Parse(tc.latestURL)
			evil := "https://" + tc.site + ".evil.test" + u.RequestURI()
			moved := strings.ReplaceAll(page, tc.latestURL, evil)
			moved = strings.ReplaceAll(moved, `"`+u.RequestURI()+`"`, `"`+evil+`"`)
			moved = strings.ReplaceAll(moved, `'`+u.RequestURI()+`'`, `'`+evil+`'`)
			if moved == page {
				t.Fatal("the fixture does not hold the latest chapter's link")
			}
			f, err := a.Parse([]byte(moved), ref)
			if err != nil {
				t.Fatal(err)
			}
			if word.Chapter(f.LatestChapter).Compare(word.Chapter(before.LatestChapter)) >= 0 || strings.Contains(f.LatestChapterURL, "evil.test") {
				t.Fatalf("the off-site link counted as the latest chapter: %s %s", f.LatestChapter, f.LatestChapterURL)
			}
		})
	}
}
