package adapters

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
			Title: "The Dark Mage Returns to Enlistment", Kind: KindManga,
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
			Title: "Nano Machine", Kind: KindManga,
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
			Title: "Swordmaster's Youngest Son", Kind: KindManga,
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
			Title: "A Title Coming Soon", Kind: KindManga,
			CoverURL: "https://cdn.asurascans.com/covers/coming-soon-title.webp",
		},
	},
	{
		name: "an Asura series takes the highest of decimal, out-of-order chapters and unescapes once",
		site: "asurascans", file: "decimal.html",
		url: "https://asurascans.com/comics/omniscient-readers-viewpoint",
		want: Facts{
			Title: "Omniscient Reader&#39;s Viewpoint & Friends", Kind: KindManga,
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
