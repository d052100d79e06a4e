// Package mihon reads a Mihon / Tachiyomi backup (.tachibk, .proto.gz): a
// gzip of one protobuf message, Backup. Only the fields the import needs
// are read; the schema is Mihon's own (docs/adr/0026-import-reads-mihon-by-source-name.md
// names the files and their field numbers).
package mihon

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

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

// The bounds of one backup. A backup is read as a stream, one entry at a
// time, so what it costs is one entry's bytes and the entries kept; a file
// past a bound is refused the moment it passes it.
const (
	// MaxEntries is the most manga entries one backup may hold (the
	// import's own cap, 10,000), and the most sources it may list.
	MaxEntries = 10000
	// MaxEntry bounds one manga entry once unzipped: its chapters, history
	// and tracking (about 150 bytes a chapter, so several thousand chapters).
	MaxEntry = 1 << 20
	// entryAverage is what a manga entry costs unzipped on average, counted
	// generously: a few hundred chapters with their history.
	entryAverage = 16 << 10
	// MaxUnzipped bounds the whole backup once unzipped, so that it fits the
	// entry cap: MaxEntries entries of entryAverage, plus room for the
	// categories and preferences a backup also carries. A gzip bomb stops here.
	MaxUnzipped = MaxEntries*entryAverage + 4<<20

	maxURL  = 2 << 10 // bytes of a url: no address is longer (the add box's own bound)
	maxKept = 256     // bytes kept of a title or a source name: only shown, in a line
)

// Why a backup is refused, beside ErrMalformed.
var (
	// ErrMalformed is a backup that is not gzip or not Mihon's protobuf.
	ErrMalformed = errors.New("mihon: not a readable Mihon backup")
	// ErrEmptyEntry is a manga entry with no url, or a source with neither
	// id nor name: Mihon writes neither.
	ErrEmptyEntry = errors.New("mihon: an entry with nothing in it")
	// ErrTooMany is a backup of more than MaxEntries manga or sources.
	ErrTooMany = errors.New("mihon: more entries than the import takes")
	// ErrTooLarge is a backup past MaxUnzipped once unzipped, an entry past
	// MaxEntry, or a url longer than any address (2 KiB).
	ErrTooLarge = errors.New("mihon: larger than the import takes")
)

// Manga is one manga entry of a backup.
type Manga struct {
	Source     int64
	SourceName string // from the backup's source list; "" when it names none
	URL, Title string
	// LastRead is the highest chapter number among the chapters marked
	// read, as a decimal ("" when none is read or numbered).
	LastRead string
}

// Read unzips and decodes a backup as it arrives: a body that is no gzip,
// or one whose protobuf breaks, is ErrMalformed, and so is a failure of r
// itself (the caller that needs to tell them apart watches r).
func Read(r io.Reader) ([]Manga, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, malformed(err)
	}
	return decode(zr)
}

// Decode reads a Backup message already unzipped.
func Decode(b []byte) ([]Manga, error) { return decode(bytes.NewReader(b)) }

// decode reads the Backup message from r, one entry at a time, and names
// each manga's source once the whole list of sources is read.
func decode(r io.Reader) ([]Manga, error) {
	in := bufio.NewReaderSize(&capped{r: r, left: MaxUnzipped}, 64<<10)
	var out []Manga
	names := map[int64]string{}
	var buf []byte
	for {
		num, v, err := nextEntry(in, &buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := take(num, v, &out, names); err != nil {
			return nil, err
		}
	}
	for i := range out {
		out[i].SourceName = names[out[i].Source]
	}
	return out, nil
}

// take decodes one top-level entry the import reads into out or names.
func take(num protowire.Number, v []byte, out *[]Manga, names map[int64]string) error {
	switch num {
	case backupManga:
		if len(*out) == MaxEntries {
			return ErrTooMany
		}
		m, err := decodeManga(v)
		if err != nil {
			return err
		}
		*out = append(*out, m)
	case backupSources:
		id, name, err := decodeSource(v)
		if err != nil {
			return err
		}
		if _, seen := names[id]; !seen && len(names) == MaxEntries {
			return ErrTooMany
		}
		names[id] = name
	}
	return nil
}

// nextEntry reads the Backup message's next field. A manga or source entry
// comes back in *buf (reused: one entry held at a time) with its number;
// any other field is read past without being held, and comes back as 0.
// io.EOF is the end of the message, at a field's boundary.
func nextEntry(in *bufio.Reader, buf *[]byte) (protowire.Number, []byte, error) {
	tag, err := binary.ReadUvarint(in)
	if err == io.EOF {
		return 0, nil, io.EOF
	}
	if err != nil {
		return 0, nil, malformed(err)
	}
	num, typ := protowire.DecodeTag(tag)
	if num < protowire.MinValidNumber {
		return 0, nil, ErrMalformed
	}
	switch typ {
	case protowire.VarintType:
		_, err = binary.ReadUvarint(in)
	case protowire.Fixed32Type:
		_, err = in.Discard(4)
	case protowire.Fixed64Type:
		_, err = in.Discard(8)
	case protowire.BytesType:
		return entryBytes(in, num, buf)
	default: // groups: Mihon's kotlinx.serialization writes none
		return 0, nil, ErrMalformed
	}
	return 0, nil, malformed(err)
}

// entryBytes reads one length-delimited field of the Backup message.
func entryBytes(in *bufio.Reader, num protowire.Number, buf *[]byte) (protowire.Number, []byte, error) {
	n, err := binary.ReadUvarint(in)
	if err != nil {
		return 0, nil, malformed(err)
	}
	if num != backupManga && num != backupSources {
		if n > MaxUnzipped {
			return 0, nil, ErrTooLarge
		}
		_, err = in.Discard(int(n))
		return 0, nil, malformed(err)
	}
	if n > MaxEntry {
		return 0, nil, ErrTooLarge
	}
	if cap(*buf) < int(n) {
		*buf = make([]byte, n, max(n, 4<<10))
	}
	v := (*buf)[:n]
	if _, err := io.ReadFull(in, v); err != nil {
		return 0, nil, malformed(err)
	}
	return num, v, nil
}

// malformed is err as the reader's answer: nil stays nil, the cap is
// ErrTooLarge, and anything else (the data ending, a broken gzip, a varint
// that overflows, the reader's own failure) is ErrMalformed.
func malformed(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrTooLarge):
		return ErrTooLarge
	}
	return ErrMalformed
}

// capped reads at most left bytes of r; a byte more is ErrTooLarge.
type capped struct {
	r    io.Reader
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if _, err := io.ReadFull(c.r, one[:]); err != nil {
			return 0, err
		}
		return 0, ErrTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
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
	if err != nil {
		return m, err
	}
	if m.URL == "" {
		return m, ErrEmptyEntry
	}
	if len(m.URL) > maxURL {
		return m, ErrTooLarge
	}
	m.Title = kept(m.Title)
	if best >= 0 && !math.IsInf(best, 0) {
		m.LastRead = strconv.FormatFloat(best, 'f', -1, 32)
	}
	return m, nil
}

// kept is s cut to maxKept bytes at a character's start: a title or a
// source name is only shown, and an entry may not hold more than that.
func kept(s string) string {
	if len(s) <= maxKept {
		return s
	}
	i := maxKept
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return strings.Clone(s[:i])
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
	if err == nil && id == 0 && name == "" {
		err = ErrEmptyEntry
	}
	return id, kept(name), err
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
