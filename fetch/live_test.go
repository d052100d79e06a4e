package fetch

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/word"
)

// liveSeries is one long-running Series per Site, read by the live smoke test.
var liveSeries = map[string]string{
	"asurascans":      "https://asurascans.com/comics/nano-machine",
	"demonicscans":    "https://demonicscans.org/manga/Martial-Peak",
	"comix":           "https://comix.to/title/k7yg7-the-spark-in-your-eyes",
	"kagane":          "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162",
	"novelfull":       "https://novelfull.com/battle-through-the-heavens.html",
	"lightnovelworld": "https://lightnovelworld.org/novel/shadow-slave/",
}

// TestLiveSites reads one real Series per Site over the network. It is gated:
// it runs only with MANGABOOKMARK_LIVE=1 (and BROWSER_WS_URL for the browser
// Sites), never in the default run. A refusal passes (it says nothing about the
// adapter); any other outcome than ok fails, naming what the Site answered.
func TestLiveSites(t *testing.T) {
	if os.Getenv("MANGABOOKMARK_LIVE") != "1" {
		t.Skip("live smoke test: set MANGABOOKMARK_LIVE=1 to read the real Sites")
	}
	browserSites, err := word.ParseBrowserSites(os.Getenv("BROWSER_SITES"))
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(ReaderOptions{BrowserSites: browserSites, BrowserWSURL: os.Getenv("BROWSER_WS_URL")})
	for _, site := range word.SiteNames() {
		t.Run(site, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			got := r.Read(ctx, site, liveSeries[site])
			switch got.Outcome {
			case word.OK:
				t.Logf("%s: %q latest %s completed %v", site, got.Facts.Title, got.Facts.LatestChapter, got.Facts.Completed)
			case word.Refused:
				t.Skipf("%s refused (status %d): %v", site, got.Status, got.Err)
			default:
				t.Errorf("%s: %s (status %d): %v", site, got.Outcome, got.Status, got.Err)
			}
		})
	}
}
