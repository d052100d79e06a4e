package handlers

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/internal/mihon"
	"github.com/mangabookmark/mangabookmark/word"
)

// readMihon reads a Mihon backup's manga entries (ADR 0026). An entry's
// Site is the one whose name its source's name spells, ignoring case,
// spaces and punctuation ("Asura Scans" → asurascans); its address is the
// manga's url, made whole with the Site's host when it is a path, and its
// Progress the highest chapter it marks read.
func readMihon(r io.Reader) ([]importEntry, error) {
	body := newEntryWindow(r)
	body.size = maxImportFile + 1 // the whole file: a backup's entries are bounded unzipped, by mihon
	body.next()
	mangas, err := mihon.Read(body)
	if err != nil {
		return nil, mihonRefusal(body, err)
	}
	if len(mangas) == 0 {
		return nil, errImport("That Mihon backup holds no manga. Nothing was imported.")
	}
	entries := make([]importEntry, 0, len(mangas))
	for _, m := range mangas {
		entries = append(entries, mihonEntry(m))
	}
	return entries, nil
}

// mihonRefusal is the sentence for a backup the reader refused; an error
// reading the body itself (a 413, a client gone) is returned as it came.
func mihonRefusal(body *entryWindow, err error) error {
	switch {
	case body.err != nil:
		return body.err
	case errors.Is(err, mihon.ErrTooMany):
		return errImport("That backup holds more than 10,000 manga: at most 10,000 at once. Nothing was imported.")
	case errors.Is(err, mihon.ErrEmptyEntry):
		return errImport("That backup holds an empty entry, which Mihon never writes: it is not a backup this server can read. Nothing was imported.")
	case errors.Is(err, mihon.ErrTooLarge):
		return errImport("That backup is larger than the import takes: at most 160 MiB unzipped, 1 MiB for one manga. Nothing was imported.")
	}
	return errImport("That gzip file is not a Mihon or Tachiyomi backup this server can read. Nothing was imported.")
}

func mihonEntry(m mihon.Manga) importEntry {
	name := m.SourceName
	if name == "" {
		name = "source " + strconv.FormatInt(m.Source, 10)
	}
	e := importEntry{Line: shownLine(name + ": " + m.Title + " (" + m.URL + ")")}
	a, ok := mihonSite(m.SourceName)
	if !ok {
		e.Skip = "From " + name + ", which is not one of the Sites here (" + strings.Join(word.SiteNames(), ", ") + "). Nothing was added."
		return e
	}
	if m.LastRead != "" {
		c, ok := chapterText(m.LastRead)
		if !ok {
			e.Line += ", read to chapter " + shownLine(m.LastRead)
			e.Skip, e.SkipWord = "Its last read chapter is not a chapter number (a number such as 12 or 12.5, not negative, at most seven digits and four decimals). Nothing was added.", string(apiNotAChapter)
			return e
		}
		e.Chapter = c
		e.Line += ", read to chapter " + c
	}
	e.URL = m.URL
	if !strings.Contains(m.URL, "://") {
		e.URL = "https://" + a.Domains()[0] + "/" + strings.TrimPrefix(m.URL, "/")
	}
	return e
}

// mihonSite is the Site a Mihon source's name spells.
func mihonSite(sourceName string) (adapters.Adapter, bool) {
	var b strings.Builder
	for _, r := range strings.ToLower(sourceName) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return nil, false
	}
	return adapters.ByName(b.String())
}
