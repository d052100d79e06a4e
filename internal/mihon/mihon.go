// Package mihon reads a Mihon / Tachiyomi backup (.tachibk, .proto.gz): a
// gzip of one protobuf message, Backup. Only the fields the import needs
// are read; the schema is Mihon's own (docs/adr/0026-import-reads-mihon-by-source-name.md
// names the files and their field numbers).
package mihon

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers from Mihon's @ProtoNumber annotations (ADR 0026).
const (
	backupManga   = 1   // Backup.backupManga: repeated BackupManga
	backupSources = 101 // Backup.backupSources: repeated BackupSource

	mangaSource   = 1  // BackupManga.source: int64 source id
	mangaURL      = 2  // BackupManga.url: the address, usually relative to the source's base
	mangaTitle    = 3  // BackupManga.title
	mangaChapters = 16 // BackupManga.chapters: repeated BackupChapter

	chapterRead   = 4 // BackupChapter.read: bool
	chapterNumber = 9 // BackupChapter.chapterNumber: float (fixed32)

	sourceName = 1 // BackupSource.name
	sourceID   = 2 // BackupSource.sourceId: int64
)

// MaxUnzipped bounds the backup once unzipped: a gzip bomb stops here.
const MaxUnzipped = 256 << 20

// ErrMalformed is a backup that is not gzip or not Mihon's protobuf.
var ErrMalformed = errors.New("mihon: not a readable Mihon backup")

// Manga is one manga entry of a backup.
type Manga struct {
	Source     int64
	SourceName string // from the backup's source list; "" when it names none
	URL, Title string
	// LastRead is the highest chapter number among the chapters marked
	// read, as a decimal ("" when none is read or numbered).
	LastRead string
}

// Read unzips and decodes a backup.
func Read(gz []byte) ([]Manga, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, ErrMalformed
	}
	b, err := io.ReadAll(io.LimitReader(zr, MaxUnzipped+1))
	if err != nil || len(b) > MaxUnzipped {
		return nil, ErrMalformed
	}
	return Decode(b)
}

// Decode reads the Backup message.
func Decode(b []byte) ([]Manga, error) {
	var out []Manga
	names := map[int64]string{}
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch {
		case num == backupManga && typ == protowire.BytesType:
			m, err := decodeManga(v)
			if err != nil {
				return err
			}
			out = append(out, m)
		case num == backupSources && typ == protowire.BytesType:
			id, name, err := decodeSource(v)
			if err != nil {
				return err
			}
			names[id] = name
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].SourceName = names[out[i].Source]
	}
	return out, nil
}

func decodeManga(b []byte) (Manga, error) {
	var m Manga
	best := -1.0
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch {
		case num == mangaSource && typ == protowire.VarintType:
			m.Source = int64(n)
		case num == mangaURL && typ == protowire.BytesType:
			m.URL = string(v)
		case num == mangaTitle && typ == protowire.BytesType:
			m.Title = string(v)
		case num == mangaChapters && typ == protowire.BytesType:
			read, number, err := decodeChapter(v)
			if err != nil {
				return err
			}
			if read && number >= 0 && float64(number) > best {
				best = float64(number)
			}
		}
		return nil
	})
	if best >= 0 && !math.IsInf(best, 0) {
		m.LastRead = strconv.FormatFloat(best, 'f', -1, 32)
	}
	return m, err
}

// decodeChapter reads one chapter's read mark and number; Mihon writes -1
// for a chapter whose number it could not read, which is never Progress.
func decodeChapter(b []byte) (read bool, number float32, err error) {
	err = fields(b, func(num protowire.Number, typ protowire.Type, _ []byte, n uint64) error {
		switch {
		case num == chapterRead && typ == protowire.VarintType:
			read = n != 0
		case num == chapterNumber && typ == protowire.Fixed32Type:
			number = math.Float32frombits(uint32(n))
		}
		return nil
	})
	if math.IsNaN(float64(number)) {
		number = -1
	}
	return read, number, err
}

func decodeSource(b []byte) (id int64, name string, err error) {
	err = fields(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch {
		case num == sourceName && typ == protowire.BytesType:
			name = string(v)
		case num == sourceID && typ == protowire.VarintType:
			id = int64(n)
		}
		return nil
	})
	return id, name, err
}

// fields walks one message's fields, handing each to f: a length-delimited
// field's bytes as v, a number (varint, fixed32, fixed64) as n. Fields of
// other numbers are skipped; a truncated or malformed one is ErrMalformed.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return ErrMalformed
		}
		b = b[l:]
		var v []byte
		var n uint64
		switch typ {
		case protowire.VarintType:
			n, l = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x uint32
			x, l = protowire.ConsumeFixed32(b)
			n = uint64(x)
		case protowire.Fixed64Type:
			n, l = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, l = protowire.ConsumeBytes(b)
		default:
			l = protowire.ConsumeFieldValue(num, typ, b)
		}
		if l < 0 {
			return ErrMalformed
		}
		b = b[l:]
		if err := f(num, typ, v, n); err != nil {
			return err
		}
	}
	return nil
}
