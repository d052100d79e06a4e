package adapters

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/word"
)

// FuzzParseListing runs every Site's ParseListing on arbitrary bytes: it
// must not panic, must finish in bounded time, and whatever it returns must
// keep the Listing contract (checkListing). The seed corpus is every listing
// fixture and variant and the challenge page, so a plain `go test` runs it.
func FuzzParseListing(f *testing.F) {
	for _, pattern := range []string{"testdata/listings/*/*", "testdata/variants/listings/*/*", "testdata/challenge/*"} {
		files, _ := filepath.Glob(pattern)
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(""))
	f.Add([]byte("{}"))
	f.Add([]byte(`<html><body><a href="javascript:alert(1)">Chapter 9</a></body></html>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, site := range word.Sites {
			l, ok := ListerOf(string(site))
			if !ok {
				continue
			}
			start := time.Now()
			got, err := l.ParseListing(body)
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("%s: ParseListing took %v on %d bytes", site, d, len(body))
			}
			if err == nil {
				checkListing(t, string(site), got)
			}
		}
	})
}

// checkListing holds a Listing to its contract: every entry is the Site's
// own Series, recognised canonically, with a canonical chapter number, each
// Series once, and no more than MaxListingEntries of them.
func checkListing(t *testing.T, site string, l Listing) {
	t.Helper()
	if len(l.Entries) > MaxListingEntries {
		t.Errorf("%s: %d entries, more than %d", site, len(l.Entries), MaxListingEntries)
	}
	seen := map[string]bool{}
	for _, e := range l.Entries {
		ref, err := Recognise(e.Ref.URL)
		if err != nil || ref != e.Ref || ref.Site != site {
			t.Errorf("%s: entry %+v is not the Site's own canonical Series (%+v, %v)", site, e.Ref, ref, err)
		}
		if c, ok := word.ParseChapter(string(e.Chapter)); !ok || c != e.Chapter {
			t.Errorf("%s: entry %s has chapter %q, not canonical", site, e.Ref.SeriesID, e.Chapter)
		}
		if seen[e.Ref.SeriesID] {
			t.Errorf("%s: Series %s listed twice", site, e.Ref.SeriesID)
		}
		seen[e.Ref.SeriesID] = true
	}
}

// Every Site has a listing reader, with fixtures: a Site without one would
// fall back to cadence and backstop alone without anyone deciding so.
func TestEveryAdapterReadsAListing(t *testing.T) {
	for _, site := range word.Sites {
		l, ok := ListerOf(string(site))
		if !ok {
			t.Errorf("%s has no listing reader", site)
			continue
		}
		if files, _ := filepath.Glob(filepath.Join("testdata", "listings", string(site), "*")); len(files) == 0 {
			t.Errorf("%s has no listing fixtures", site)
		}
		if u := l.ListingTarget(1).URL; u == "" || l.ListingTarget(2).URL == u {
			t.Errorf("%s: pages 1 and 2 of the listing are not two addresses (%q)", site, u)
		}
	}
}
