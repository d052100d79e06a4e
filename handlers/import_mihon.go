package handlers

import (
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
func readMihon(b []byte) ([]importEntry, error) {
	mangas, err := mihon.Read(b)
	if err != nil {
		return nil, errImport("That gzip file is not a Mihon or Tachiyomi backup this server can read. Nothing was imported.")
	}
	if len(mangas) == 0 {
		return nil, errImport("That Mihon backup holds no manga. Nothing was imported.")
	}
	if len(mangas) > maxImportEntries {
		return nil, errImport("That backup holds " + strconv.Itoa(len(mangas)) + " manga: at most 10,000 at once. Nothing was imported.")
	}
	entries := make([]importEntry, 0, len(mangas))
	for _, m := range mangas {
		entries = append(entries, mihonEntry(m))
	}
	return entries, nil
}

func mihonEntry(m mihon.Manga) importEntry {
	name := m.SourceName
	if name == "" {
		name = "source " + strconv.FormatInt(m.Source, 10)
	}
	e := importEntry{Line: name + ": " + m.Title + " (" + m.URL + ")", Chapter: m.LastRead}
	a, ok := mihonSite(m.SourceName)
	if !ok {
		e.Skip = "From " + name + ", which is not one of the Sites here (" + strings.Join(word.SiteNames(), ", ") + "). Nothing was added."
		return e
	}
	e.URL = m.URL
	if !strings.Contains(m.URL, "://") {
		e.URL = "https://" + a.Domains()[0] + "/" + strings.TrimPrefix(m.URL, "/")
	}
	if e.Chapter != "" {
		e.Line += ", read to chapter " + e.Chapter
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
