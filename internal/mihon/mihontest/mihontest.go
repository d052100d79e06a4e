// Package mihontest writes Mihon backups for tests: the fixtures are built
// here with protowire, never checked in as binary files.
package mihontest

import (
	"bytes"
	"compress/gzip"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// Chapter is one BackupChapter of a fixture.
type Chapter struct {
	Read   bool
	Number float32
}

// Entry is one BackupManga of a fixture.
type Entry struct {
	Source     int64
	URL, Title string
	Chapters   []Chapter
}

// Backup writes a Backup message the way Mihon does (field numbers from
// its @ProtoNumber annotations, ADR 0026), gzipped.
func Backup(t testing.TB, sources map[int64]string, entries ...Entry) []byte {
	var b []byte
	for _, e := range entries {
		var m []byte
		m = protowire.AppendTag(m, 1, protowire.VarintType)
		m = protowire.AppendVarint(m, uint64(e.Source))
		m = protowire.AppendTag(m, 2, protowire.BytesType)
		m = protowire.AppendString(m, e.URL)
		m = protowire.AppendTag(m, 3, protowire.BytesType)
		m = protowire.AppendString(m, e.Title)
		m = protowire.AppendTag(m, 8, protowire.VarintType) // status: skipped
		m = protowire.AppendVarint(m, 1)
		for _, c := range e.Chapters {
			var ch []byte
			ch = protowire.AppendTag(ch, 1, protowire.BytesType)
			ch = protowire.AppendString(ch, "/chapter")
			if c.Read {
				ch = protowire.AppendTag(ch, 4, protowire.VarintType)
				ch = protowire.AppendVarint(ch, 1)
			}
			ch = protowire.AppendTag(ch, 9, protowire.Fixed32Type)
			ch = protowire.AppendFixed32(ch, math.Float32bits(c.Number))
			m = protowire.AppendTag(m, 16, protowire.BytesType)
			m = protowire.AppendBytes(m, ch)
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, m)
	}
	for id, name := range sources {
		var s []byte
		s = protowire.AppendTag(s, 1, protowire.BytesType)
		s = protowire.AppendString(s, name)
		s = protowire.AppendTag(s, 2, protowire.VarintType)
		s = protowire.AppendVarint(s, uint64(id))
		b = protowire.AppendTag(b, 101, protowire.BytesType)
		b = protowire.AppendBytes(b, s)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return gz.Bytes()
}
