package mihon_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"testing"

	"github.com/mangabookmark/mangabookmark/internal/mihon"
	"github.com/mangabookmark/mangabookmark/internal/mihon/mihontest"
)

func TestReadTakesEachMangaWithItsSourceAndLastReadChapter(t *testing.T) {
	raw := mihontest.Backup(t, map[int64]string{7: "Asura Scans"},
		mihontest.Entry{Source: 7, URL: "/comics/nano-machine", Title: "Nano Machine", Chapters: []mihontest.Chapter{
			{Read: true, Number: 12.5}, {Read: true, Number: 3}, {Read: false, Number: 40}, {Read: true, Number: -1}}},
		mihontest.Entry{Source: 9, URL: "/x", Title: "Unread"})
	got, err := mihon.Read(raw)
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
		if _, err := mihon.Read(b); !errors.Is(err, mihon.ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

// FuzzMihon: any bytes decode to entries or ErrMalformed, never a panic,
// and a Progress read is a plain non-negative decimal.
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
		got, err := mihon.Decode(b)
		if err != nil && !errors.Is(err, mihon.ErrMalformed) {
			t.Fatalf("error %v is not ErrMalformed", err)
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
