package demo

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/mangabookmark/mangabookmark/adapters"
)

// The demo's stand-in Sites change what they serve as the script plays. Each
// change is a small edit of a real fixture page, and each is checked by
// reading the edited page back through the Site's own adapter: a change that
// does not read as intended is an error at start, never a quiet demo that
// shows nothing.

// bumpChapter is the page with its Latest Chapter one higher: every number
// token equal to the current Latest Chapter becomes the next one (the link,
// its text, the JSON field), as a Site's page reads after it publishes.
func bumpChapter(site string, ref adapters.Ref, body []byte) ([]byte, string, error) {
	before, err := readPage(site, ref, body)
	if err != nil || !before.HasLatest {
		return nil, "", fmt.Errorf("demo: %s/%s has no Latest Chapter to move past", site, ref.SeriesID)
	}
	cur := before.LatestChapter
	whole, err := strconv.Atoi(strings.SplitN(cur, ".", 2)[0])
	if err != nil {
		return nil, "", fmt.Errorf("demo: %s/%s: Latest Chapter %q", site, ref.SeriesID, cur)
	}
	next := strconv.Itoa(whole + 1)
	out := replaceNumber(body, cur, next)
	after, err := readPage(site, ref, out)
	if err != nil || after.LatestChapter != next {
		return nil, "", fmt.Errorf("demo: %s/%s: the edited page reads %q, not %s", site, ref.SeriesID, after.LatestChapter, next)
	}
	return out, next, nil
}

// replaceNumber replaces each occurrence of the number old that stands alone
// (no digit, dot or comma either side) with repl.
func replaceNumber(body []byte, old, repl string) []byte {
	var out bytes.Buffer
	rest := body
	for {
		i := bytes.Index(rest, []byte(old))
		if i < 0 {
			out.Write(rest)
			return out.Bytes()
		}
		end := i + len(old)
		alone := (i == 0 || !numberByte(rest[i-1])) && (end == len(rest) || !numberByte(rest[end]))
		out.Write(rest[:i])
		if alone {
			out.WriteString(repl)
		} else {
			out.WriteString(old)
		}
		rest = rest[end:]
	}
}

func numberByte(b byte) bool { return b >= '0' && b <= '9' || b == '.' || b == ',' }

// completedWords are the status spellings of an ongoing Series and their
// completed counterparts across the six Sites' pages.
var completedWords = strings.NewReplacer(
	"Ongoing", "Completed",
	"ongoing", "completed",
	"releasing", "finished",
	"ActiveActionStatus", "CompletedActionStatus",
)

// markCompleted is the page as it reads once the Site marks the Series
// completed.
func markCompleted(site string, ref adapters.Ref, body []byte) ([]byte, error) {
	out := []byte(completedWords.Replace(string(body)))
	f, err := readPage(site, ref, out)
	if err != nil || !f.Completed {
		return nil, fmt.Errorf("demo: %s/%s does not read as completed after the edit", site, ref.SeriesID)
	}
	return out, nil
}

// newLayout renames what an adapter anchors its chapter list on, as a Site
// does when it ships a new theme: the page still reads as the Series' page,
// with no chapter in it (no_chapter, never a parse error).
var newLayout = map[string]*strings.Replacer{
	"demonicscans": strings.NewReplacer(`id="chapters-list"`, `id="chapter-index"`, `class="chplinks"`, `class="chapter-row"`),
}

func relayout(site string, ref adapters.Ref, body []byte) ([]byte, error) {
	r, ok := newLayout[site]
	if !ok {
		return nil, fmt.Errorf("demo: no new layout for %s", site)
	}
	out := []byte(r.Replace(string(body)))
	f, err := readPage(site, ref, out)
	if err != nil {
		return nil, fmt.Errorf("demo: %s/%s no longer reads as its page after the layout change: %w", site, ref.SeriesID, err)
	}
	if f.HasLatest {
		return nil, fmt.Errorf("demo: %s/%s still lists chapter %s after the layout change", site, ref.SeriesID, f.LatestChapter)
	}
	return out, nil
}

func readPage(site string, ref adapters.Ref, body []byte) (adapters.Facts, error) {
	a, ok := adapters.ByName(site)
	if !ok {
		return adapters.Facts{}, fmt.Errorf("demo: unknown site %s", site)
	}
	return a.Parse(body, ref)
}
