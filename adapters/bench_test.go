package adapters

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/word"
)

// BenchmarkParse reads each Site's ongoing fixture, and asurascans' page
// grown to 2 000 chapters (a long-running Series), to show what one Poll's
// parse costs and that it grows linearly with the page.
func BenchmarkParse(b *testing.B) {
	for _, site := range word.SiteNames() {
		a, _ := ByName(site)
		files, _ := filepath.Glob(filepath.Join("testdata", site, "ongoing.*"))
		if len(files) != 1 {
			b.Fatalf("%s: no ongoing fixture", site)
		}
		body, err := os.ReadFile(files[0])
		if err != nil {
			b.Fatal(err)
		}
		ref, ok := RefFromPage(site, body)
		if !ok {
			ref = Ref{Site: site, SeriesID: "x", URL: "https://" + a.Domains()[0] + "/"}
		}
		b.Run(site, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := a.Parse(body, ref); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("asurascans-2000-chapters", func(b *testing.B) {
		a, _ := ByName("asurascans")
		var rows []string
		for i := 1; i <= 2000; i++ {
			rows = append(rows, fmt.Sprintf(`[0,{&quot;number&quot;:[0,%d],&quot;title&quot;:[0,&quot;Chapter %d&quot;],&quot;series_slug&quot;:[0,&quot;nano-machine&quot;]}]`, i, i))
		}
		body := []byte(`<html><head><link rel="canonical" href="https://asurascans.com/comics/nano-machine-7f873ca6"></head><body>
<astro-island component-url="/_astro/ChapterListReact.js" props="{&quot;chapters&quot;:[1,[` + strings.Join(rows, ",") + `]]}"></astro-island>
<astro-island props="{&quot;title&quot;:[0,&quot;Nano Machine&quot;],&quot;description&quot;:[0,&quot;x&quot;],&quot;status&quot;:[0,&quot;ongoing&quot;]}"></astro-island></body></html>`)
		ref, err := Recognise("https://asurascans.com/comics/nano-machine-7f873ca6")
		if err != nil {
			b.Fatal(err)
		}
		if f, err := a.Parse(body, ref); err != nil || f.LatestChapter != "2000" {
			b.Fatalf("the synthetic page parses to %+v, %v", f, err)
		}
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := a.Parse(body, ref); err != nil {
				b.Fatal(err)
			}
		}
	})
}
