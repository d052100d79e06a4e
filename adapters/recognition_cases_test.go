package adapters_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/word"
)

// recognitionCase is one row of the table the userscript's tests read too, so
// the server and the script recognise the same addresses the same way.
type recognitionCase struct {
	Name     string  `json:"name"`
	Address  string  `json:"address"`
	Site     *string `json:"site"`
	SeriesID string  `json:"series_id"`
	Chapter  *string `json:"chapter"`
}

func readRecognitionCases(t *testing.T) []recognitionCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "recognition", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []recognitionCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatalf("cases.json: %v", err)
	}
	if len(cases) == 0 {
		t.Fatal("cases.json holds no case")
	}
	return cases
}

func TestTheSharedRecognitionCases(t *testing.T) {
	for _, tc := range readRecognitionCases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			ref, err := adapters.Recognise(tc.Address)
			num, numOK := adapters.ChapterOf(tc.Address)
			if tc.Site == nil {
				if err == nil {
					t.Fatalf("Recognise(%q) = %+v, want no Series", tc.Address, ref)
				}
				if numOK {
					t.Fatalf("ChapterOf(%q) = %q, want none", tc.Address, num)
				}
				return
			}
			if err != nil {
				t.Fatalf("Recognise(%q): %v", tc.Address, err)
			}
			if ref.Site != *tc.Site || ref.SeriesID != tc.SeriesID {
				t.Errorf("Recognise(%q) = %s/%s, want %s/%s", tc.Address, ref.Site, ref.SeriesID, *tc.Site, tc.SeriesID)
			}
			switch {
			case tc.Chapter == nil && numOK:
				t.Errorf("ChapterOf(%q) = %q, want none", tc.Address, num)
			case tc.Chapter != nil && (!numOK || num != *tc.Chapter):
				t.Errorf("ChapterOf(%q) = %q, %v; want %q", tc.Address, num, numOK, *tc.Chapter)
			}
		})
	}
}

// Every Site appears in the shared table with a Series page and, where its
// addresses carry one, a chapter number, so neither side can drop a Site
// unnoticed.
func TestTheSharedCasesCoverEverySite(t *testing.T) {
	series, chapters := map[string]bool{}, map[string]bool{}
	for _, tc := range readRecognitionCases(t) {
		if tc.Site == nil {
			continue
		}
		series[*tc.Site] = true
		if tc.Chapter != nil {
			chapters[*tc.Site] = true
		}
	}
	for _, site := range word.SiteNames() {
		if !series[site] {
			t.Errorf("no case recognises a %s address", site)
		}
		if !chapters[site] && site != "kagane" {
			t.Errorf("no case reads a %s chapter number", site)
		}
	}
}

func TestHostsListCurrentThenLegacyHosts(t *testing.T) {
	got := adapters.Hosts("asurascans")
	if len(got) < 2 || got[0] != "asurascans.com" {
		t.Fatalf("Hosts(asurascans) = %v, want asurascans.com first and its old hosts after", got)
	}
	for _, h := range got {
		if _, err := adapters.Recognise("https://" + h + "/comics/nano-machine"); err != nil {
			t.Errorf("host %s is listed but its addresses are not recognised: %v", h, err)
		}
	}
	if adapters.Hosts("mangadex") != nil {
		t.Error("Hosts names hosts for an unsupported Site")
	}
}
