package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/fetch"
	"github.com/mangabookmark/mangabookmark/word"
)

const fetchUsage = "usage: mangabookmark fetch SERIES_URL"

// runFetch is `mangabookmark fetch URL`: it runs the Poll's real read path
// (recognise → gate → fetch over the Site's route → classify → parse) once and
// prints the outcome word on one line, then the facts as one JSON object (the
// shape parse prints). The HTTP status and any error go to stderr. It honours
// SITE_BASE_URLS, BROWSER_SITES and BROWSER_WS_URL as the server does. args are
// the arguments after "fetch".
//
// It answers scripts like curl --fail: the exit status is 0 only for ok. A read
// that ends in any other outcome still prints the outcome word and the facts,
// then returns a NotOKError (exit status 3); bad input or configuration is an
// ordinary error (exit status 1).
func runFetch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("fetch", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return fmt.Errorf("fetch: %v (%s)", err, fetchUsage)
	}
	if len(pos) != 1 {
		return fmt.Errorf("fetch: expected one Series address (%s)", fetchUsage)
	}
	ref, err := adapters.Recognise(pos[0])
	if err != nil {
		return fmt.Errorf("fetch: %v", err)
	}
	bases, err := fetch.ParseBaseURLs(getenv("SITE_BASE_URLS"))
	if err != nil {
		return fmt.Errorf("fetch: %v", err)
	}
	browserSites, err := word.ParseBrowserSites(getenv("BROWSER_SITES"))
	if err != nil {
		return fmt.Errorf("fetch: %v", err)
	}
	r := fetch.NewReader(fetch.ReaderOptions{
		BaseURLs:     bases,
		BrowserSites: browserSites,
		BrowserWSURL: getenv("BROWSER_WS_URL"),
		Logger:       slog.New(slog.NewTextHandler(stderr, nil)),
	})
	a, _ := adapters.ByName(ref.Site)
	res := r.Read(ctx, ref.Site, ref.URL)
	if _, err := fmt.Fprintln(stdout, res.Outcome); err != nil {
		return err
	}
	detail := fmt.Sprintf("route=%s status=%d checked=%v", r.Route(ref.Site), res.Status, res.Checked)
	if res.RetryAfter > 0 {
		detail += fmt.Sprintf(" retry_after=%s", res.RetryAfter)
	}
	if res.Err != nil {
		detail += fmt.Sprintf(" error=%q", res.Err.Error())
	}
	fmt.Fprintln(stderr, detail)
	if err := writeJSON(stdout, newFactsJSON(ref, word.Site(a.Site()).Kind(), res.Facts)); err != nil {
		return err
	}
	if res.Outcome != word.OK {
		return NotOKError{Outcome: res.Outcome}
	}
	return nil
}

// exitNotOK is fetch's exit status for a read that ended in an outcome other
// than ok; 1 stays the status of bad input, so a script can tell them apart.
const exitNotOK = 3

// NotOKError is fetch's answer when the read ended in an outcome other than ok.
type NotOKError struct{ Outcome word.Outcome }

func (e NotOKError) Error() string {
	return fmt.Sprintf("fetch: the read ended in %s, not ok", e.Outcome)
}
