package adapters

import (
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/mangabookmark/mangabookmark/word"
)

// The listing tests of every Site share these: readsListing holds a fixture
// to the Listing contract and to the Listing it must read, notAListing a
// page that is not the listing, listed names an expected entry, and
// listingFiles and listingVariants keep every fixture on disk in a test.

// readsListing parses testdata/<dir>/<file> with the Site's Lister, holds the
// result to the Listing contract, and compares it with want.
func readsListing(t *testing.T, site, dir, file string, want Listing) {
	t.Helper()
	l, ok := ListerOf(site)
	if !ok {
		t.Fatalf("%s has no Lister", site)
	}
	got, err := l.ParseListing(readFixture(t, dir, file))
	if err != nil {
		t.Fatalf("%s: ParseListing(%s): %v", site, file, err)
	}
	checkListing(t, site, got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: %s:\n got %+v\nwant %+v", site, file, got, want)
	}
}

// notAListing asserts that a body the Site's listing reader must not take for
// its listing returns ErrNotListing.
func notAListing(t *testing.T, site string, body []byte) {
	t.Helper()
	l, _ := ListerOf(site)
	if got, err := l.ParseListing(body); !errors.Is(err, ErrNotListing) {
		t.Errorf("%s: ParseListing = %+v, %v; want ErrNotListing", site, got, err)
	}
}

// listingFiles fails the test when a file in testdata/<dir> is not among
// files, so none is only a fuzz seed, and returns files.
func listingFiles(t *testing.T, dir string, files ...string) []string {
	t.Helper()
	on, _ := filepath.Glob(filepath.Join("testdata", dir, "*"))
	for _, f := range on {
		if !slices.Contains(files, filepath.Base(f)) {
			t.Errorf("%s is in no test", f)
		}
	}
	return files
}

// listingVariants is the variant files of a Site's listing, each with why it
// differs (at least three); the test fails when a file in the directory is
// not among them.
func listingVariants(t *testing.T, site string, files []string) []string {
	t.Helper()
	if len(files) < 3 {
		t.Errorf("%s: %d listing variants, want at least 3", site, len(files))
	}
	return listingFiles(t, filepath.Join("variants", "listings", site), files...)
}

// listed is one expected entry: the Series address as the adapter's own
// Recognise names it, and the chapter.
func listed(t *testing.T, address, chapter string) ListingEntry {
	t.Helper()
	ref, err := Recognise(address)
	if err != nil {
		t.Fatal(err)
	}
	return ListingEntry{Ref: ref, Chapter: word.Chapter(chapter)}
}

// listedAs is listed, held to the Series the test names: its Site, its
// series_id and its canonical address.
func listedAs(t *testing.T, site, id, address, chapter string) ListingEntry {
	t.Helper()
	e := listed(t, address, chapter)
	if want := (Ref{Site: site, SeriesID: id, URL: address}); e.Ref != want {
		t.Fatalf("%s recognised as %+v, want %+v", address, e.Ref, want)
	}
	return e
}
