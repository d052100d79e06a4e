package adapters

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/word"
)

// variantCases (testdata/variants/<site>/, apart from the Site's own pages,
// which the demo serves) are pages laid out differently from a Site's
// completed.html —
// each block the adapter reads moved somewhere else legitimate, wrapped,
// reordered, after the footer, or joined by another Series' blocks — that
// must read exactly the facts completed.html reads (doc.go, "Where an adapter
// may look").
var variantCases = map[string][]struct{ file, why string }{
	"asurascans": {
		{"list-after-footer.html", "the chapter list island after the footer, wrapped"},
		{"reordered-wrapped.html", "the chapter island first, the details island last, both outside the article"},
		{"related.html", "another Series' details island before ours and its chapter-list island after ours"},
		{"other-component.html", "the chapter list in an island of another component"},
		{"html-rows.html", "no chapter island: the HTML chapter rows"},
	},
	"demonicscans": {
		{"list-outside.html", "the chapter list outside the info container"},
		{"list-after-footer.html", "the chapter list after the footer, wrapped"},
		{"details-moved.html", "the cover block before the container, the stats rows wrapped and reordered"},
		{"reordered.html", "the list first, the details column, then the cover"},
		{"related.html", "another Series' #chapters-list first, with look-alike titles and paths"},
	},
	"comix": {
		{"rows-outside-list.html", "the chapter rows outside .mchap-list, each wrapped"},
		{"after-footer.html", "the chapter section after the footer, initial-data at the end of the body"},
		{"related.html", "another title's detail entry sorted first, and its rows before ours"},
		{"row-links.html", "rows that are the links themselves, the detail wrapped in state.data"},
	},
	"kagane": {
		{"reordered.json", "the keys in another order, the books newest first"},
		{"related.json", "a related Series in the body, and another Series' book in the list"},
		{"own-series-ids.json", "every book naming this Series by its id"},
	},
	"novelfull": {
		{"blocks-moved.html", "the description column outside the details block, the latest box after it"},
		{"info-wrapped.html", "the info rows wrapped, Status first, the cover outside the info holder"},
		{"lists-after-footer.html", "both chapter lists after the footer, without their usual parents"},
		{"related.html", "another Series' chapter list, and look-alike addresses"},
		{"absolute-links.html", "chapter links written as absolute addresses"},
		{"info-outside-holder.html", "the info rows (with Status) outside the info holder, after the chapter list"},
	},
	"lightnovelworld": {
		{"cards-after-footer.html", "the chapter cards after the footer, wrapped"},
		{"chapter-links.html", "plain absolute chapter links in a table instead of cards"},
		{"graph.html", "the Book inside an @graph at the end of the body"},
		{"related.html", "another novel's Book first, its chapter card and look-alike links"},
		{"onclick-absolute.html", "cards whose onclick names an absolute address in double quotes"},
	},
}

// baseCase is the fixture case of a Site's completed.html: the facts every
// variant must read.
func baseCase(t *testing.T, site string) fixtureCase {
	t.Helper()
	for _, tc := range fixtureCases {
		if tc.site == site && tc.file == "completed.html" || tc.site == site && site == "kagane" && tc.file == "completed.json" {
			return tc
		}
	}
	t.Fatalf("no completed fixture case for %s", site)
	return fixtureCase{}
}

func TestAPageLaidOutDifferentlyReadsTheSameFacts(t *testing.T) {
	for _, site := range word.SiteNames() {
		base := baseCase(t, site)
		a, _ := ByName(site)
		ref, err := Recognise(base.url)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range variantCases[site] {
			t.Run(site+"/"+v.why, func(t *testing.T) {
				got, err := a.Parse(readFixture(t, filepath.Join("variants", site), v.file), ref)
				if err != nil {
					t.Fatalf("Parse(%s): %v", v.file, err)
				}
				if got != base.want {
					t.Errorf("%s:\n got %+v\nwant %+v", v.file, got, base.want)
				}
			})
		}
	}
}

// Every variant file is in the table (and so in the fuzz seed corpus, which
// takes every file of testdata/<site>/ and testdata/variants/<site>/).
func TestEveryVariantFixtureIsInTheTable(t *testing.T) {
	for _, site := range word.SiteNames() {
		files, _ := filepath.Glob(filepath.Join("testdata", "variants", site, "*"))
		var listed []string
		for _, v := range variantCases[site] {
			listed = append(listed, filepath.Join("testdata", "variants", site, v.file))
		}
		for _, f := range files {
			if !slices.Contains(listed, f) {
				t.Errorf("%s is not in variantCases", f)
			}
		}
		for _, f := range listed {
			if _, err := os.Stat(f); err != nil {
				t.Errorf("variantCases names %s: %v", f, err)
			}
		}
		if len(listed) < 3 {
			t.Errorf("%s has %d variants", site, len(listed))
		}
	}
}

// A related block's chapters are higher than ours: a variant whose facts
// matched only because it held no other Series would prove nothing.
func TestRelatedVariantsCarryAnotherSeriesHigherChapter(t *testing.T) {
	for _, site := range word.SiteNames() {
		b := string(readFixture(t, filepath.Join("variants", site), "related."+map[bool]string{true: "json", false: "html"}[site == "kagane"]))
		if !strings.Contains(b, "9999") && !strings.Contains(b, "9998") {
			t.Errorf("%s variant-related holds no higher chapter of another Series", site)
		}
	}
}
