package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/word"
)

// maxParseInput bounds what the parse tool reads from a file or stdin.
const maxParseInput = 16 << 20

// factsJSON is the one JSON object the owner tools print. Its keys are fixed:
// site, series_id, title, cover_url, kind, latest_chapter (a number, or null when
// the page held none), latest_chapter_url, completed.
type factsJSON struct {
	Site             string       `json:"site"`
	SeriesID         string       `json:"series_id"`
	Title            string       `json:"title"`
	CoverURL         string       `json:"cover_url"`
	Kind             string       `json:"kind"`
	LatestChapter    *json.Number `json:"latest_chapter"`
	LatestChapterURL string       `json:"latest_chapter_url"`
	Completed        bool         `json:"completed"`
}

func newFactsJSON(ref adapters.Ref, kind word.Kind, f adapters.Facts) factsJSON {
	out := factsJSON{
		Site: ref.Site, SeriesID: ref.SeriesID, Title: f.Title, CoverURL: f.CoverURL,
		Kind: string(kind), LatestChapterURL: f.LatestChapterURL, Completed: f.Completed,
	}
	if f.Kind != "" {
		out.Kind = string(f.Kind)
	}
	if f.HasLatest {
		n := json.Number(f.LatestChapter)
		out.LatestChapter = &n
	}
	return out
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

const parseUsage = "usage: mangabookmark parse --site SITE [--url SERIES_URL] FILE|-"

// runParse is `mangabookmark parse --site SITE [--url URL] FILE|-`: it parses a
// saved page (or API body) with the Site's adapter, never fetching, and prints the
// facts as one JSON object. args are the arguments after "parse". --url names the
// Series the page belongs to (its series_id, the base for relative links, and the
// scope of its chapter links); without it the page's own canonical address is
// used when it has one.
func runParse(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("parse", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	site := fs.String("site", "", "the Site whose adapter parses the page: "+strings.Join(word.SiteNames(), ", "))
	seriesURL := fs.String("url", "", "the Series address the page belongs to")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return fmt.Errorf("parse: %v (%s)", err, parseUsage)
	}
	if *site == "" {
		return fmt.Errorf("parse: --site is required (%s)", parseUsage)
	}
	a, ok := adapters.ByName(*site)
	if !ok {
		return fmt.Errorf("parse: unknown site %q (one of %s)", *site, strings.Join(word.SiteNames(), ", "))
	}
	if len(pos) != 1 {
		return fmt.Errorf("parse: expected one FILE or - (%s)", parseUsage)
	}
	ref := adapters.Ref{Site: a.Site()}
	if *seriesURL != "" {
		ref, err = adapters.Recognise(*seriesURL)
		if err != nil {
			return fmt.Errorf("parse: --url: %v", err)
		}
		if ref.Site != a.Site() {
			return fmt.Errorf("parse: --url is a %s address, not %s", ref.Site, a.Site())
		}
	}
	body, err := readInput(pos[0], stdin)
	if err != nil {
		return fmt.Errorf("parse: %v", err)
	}
	if ref.SeriesID == "" {
		// Without --url, the page's own canonical address names its Series.
		if r, ok := adapters.RefFromPage(a.Site(), body); ok {
			ref = r
		}
	}
	facts, err := a.Parse(body, ref)
	if err != nil {
		return fmt.Errorf("parse: %v", err)
	}
	return writeJSON(stdout, newFactsJSON(ref, word.Site(a.Site()).Kind(), facts))
}

// readInput reads FILE, or stdin for "-", up to maxParseInput.
func readInput(name string, stdin io.Reader) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %v", name, errors.Unwrap(err))
		}
		defer f.Close()
		r = f
	}
	body, err := io.ReadAll(io.LimitReader(r, maxParseInput+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", name, err)
	}
	if len(body) > maxParseInput {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxParseInput)
	}
	return body, nil
}

// parseInterspersed lets flags come before or after the positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
