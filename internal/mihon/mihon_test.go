package mihon_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"runtime"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mangabookmark/mangabookmark/internal/mihon"
	"github.com/mangabookmark/mangabookmark/internal/mihon/mihontest"
)

func TestReadTakesEachMangaWithItsSourceAndLastReadChapter(t *testing.T) {
	raw := mihontest.Backup(t, map[int64]string{7: "Asura Scans"},
		mihontest.Entry{Source: 7, URL: "/comics/nano-machine", Title: "Nano Machine", Chapters: []mihontest.Chapter{
			{Read: true, Number: 12.5}, {Read: true, Number: 3}, {Read: false, Number: 40}, {Read: true, Number: -1}}},
		mihontest.Entry{Source: 9, URL: "/x", Title: "Unread"})
	got, err := mihon.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := []mihon.Manga{
		{Source: 7, SourceName: "Asura Scans", URL: "/comics/nano-machine", Title: "Nano Machine", LastRead: "12.5"},
		{Source: 9, URL: "/x", Title: "Unread"},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestReadRefusesWhatIsNotABackup(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte{0x0a, 0xff}) // field 1, bytes, a length past the end
	zw.Close()
	for name, b := range map[string][]byte{"not gzip": []byte("hello"), "truncated": gz.Bytes(), "gzip cut": gz.Bytes()[:12]} {
		if _, err := mihon.Read(bytes.NewReader(b)); !errors.Is(err, mihon.ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

// FuzzMihon: any bytes decode to entries or one of the refusals, never a
// panic, within a memory budget, and a Progress read is a plain
// non-negative decimal.
func FuzzMihon(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x02, 0x08, 0x07})
	f.Add([]byte{0x0a, 0xff})
	f.Add([]byte{0xaa, 0x06, 0x03, 0x0a, 0x01, 0x41})
	var seed bytes.Buffer
	zr, _ := gzip.NewReader(bytes.NewReader(mihontest.Backup(f, map[int64]string{1: "Kagane"}, mihontest.Entry{Source: 1, URL: "/series/x", Chapters: []mihontest.Chapter{{Read: true, Number: 2}}})))
	seed.ReadFrom(zr)
	f.Add(seed.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		var got []mihon.Manga
		var err error
		if used := allocated(func() { got, err = mihon.Decode(b) }); used > fuzzBudget+uint64(8*len(b)) {
			t.Fatalf("decoding %d bytes allocated %d MB", len(b), used>>20)
		}
		if err != nil && !refusal(err) {
			t.Fatalf("error %v is not one of the refusals", err)
		}
		for _, m := range got {
			for _, r := range m.LastRead {
				if (r < '0' || r > '9') && r != '.' {
					t.Fatalf("LastRead %q is not a decimal", m.LastRead)
				}
			}
		}
	})
}

// fuzzBudget is what decoding any input may allocate beside a few times
// its own size: one entry's buffer and the entries kept.
const fuzzBudget = 8 << 20

func refusal(err error) bool {
	for _, e := range []error{mihon.ErrMalformed, mihon.ErrEmptyEntry, mihon.ErrTooMany, mihon.ErrTooLarge} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// allocated is how many bytes f allocated (the whole process's count: the
// tests that call it are not parallel).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func gzipped(t testing.TB, parts ...[]byte) []byte {
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	for _, p := range parts {
		if _, err := zw.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	return gz.Bytes()
}

// TestHostileBackupsAreRefusedAsTheyCome: a backup of empty entries, of
// more entries than the import takes, of one entry past its bound, or one
// that unzips past MaxUnzipped is refused as soon as it passes the bound,
// allocating at most 32 MB whatever it would unzip to.
func TestHostileBackupsAreRefusedAsTheyCome(t *testing.T) {
	entry := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType),
		protowire.AppendString(protowire.AppendTag(nil, 2, protowire.BytesType), "/comics/x"))
	huge := protowire.AppendTag(nil, 1, protowire.BytesType)
	huge = protowire.AppendVarint(huge, mihon.MaxEntry+1)
	padding := protowire.AppendTag(nil, 50, protowire.BytesType) // a field the import skips
	padding = protowire.AppendVarint(padding, mihon.MaxUnzipped)
	for _, tc := range []struct {
		name string
		gz   []byte
		want error
	}{
		{"64 MiB of empty manga entries", gzipped(t, bytes.Repeat([]byte{0x0a, 0x00}, 32<<20)), mihon.ErrEmptyEntry},
		{"empty sources", gzipped(t, entry, bytes.Repeat([]byte{0xaa, 0x06, 0x00}, 1<<20)), mihon.ErrEmptyEntry},
		{"10,001 manga", gzipped(t, bytes.Repeat(entry, mihon.MaxEntries+1)), mihon.ErrTooMany},
		{"one manga past its bound", gzipped(t, huge, make([]byte, mihon.MaxEntry+1)), mihon.ErrTooLarge},
		{"a skipped field past the whole bound", gzipped(t, padding, make([]byte, mihon.MaxUnzipped)), mihon.ErrTooLarge},
	} {
		var err error
		used := allocated(func() { _, err = mihon.Read(bytes.NewReader(tc.gz)) })
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if used > 32<<20 {
			t.Errorf("%s: refusing it allocated %d MB", tc.name, used>>20)
		}
	}
}
