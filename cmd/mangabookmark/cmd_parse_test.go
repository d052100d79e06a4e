package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func fixture(site, file string) string {
	return filepath.Join("..", "..", "adapters", "testdata", site, file)
}

func noEnv(string) string { return "" }

var factKeys = []string{"completed", "cover_url", "kind", "latest_chapter", "latest_chapter_url", "series_id", "site", "title"}

// decodeFacts checks the object has exactly the eight keys and returns it.
func decodeFacts(t *testing.T, line []byte) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, line)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, factKeys) {
		t.Fatalf("keys %v, want exactly %v", keys, factKeys)
	}
	return m
}

func TestRunParse(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  map[string]any
	}{
		{
			name: "a saved Asura page prints its facts with the chapter as a number",
			args: []string{"--site", "asurascans", "--url", "https://asurascans.com/comics/nano-machine-7f873ca6", fixture("asurascans", "ongoing.html")},
			want: map[string]any{
				"site": "asurascans", "series_id": "nano-machine", "title": "Nano Machine",
				"cover_url": "https://cdn.asurascans.com/covers/nano-machine.webp", "kind": "manga",
				"latest_chapter": json.Number("271"), "latest_chapter_url": "https://asurascans.com/comics/nano-machine/chapter/271",
				"completed": false,
			},
		},
		{
			name: "flags may follow the file, and a decimal chapter stays a number",
			args: []string{fixture("kagane", "decimal.json"), "--url", "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162", "--site", "kagane"},
			want: map[string]any{
				"site": "kagane", "series_id": "019c2b1c-cc9b-745f-afed-09c230759162", "title": "Dungeon Porter",
				"cover_url": "https://kagane.to/api/v2/image/019c2b1c-aaaa-7bbb-8ccc-0d0e0f101112", "kind": "manga",
				"latest_chapter":     json.Number("11.25"),
				"latest_chapter_url": "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162/reader/019c2bda-0000-7000-8000-000000000004",
				"completed":          false,
			},
		},
		{
			name:  "a page on stdin without --url takes its Series from the page, with a null chapter when there is none",
			args:  []string{"--site", "novelfull", "-"},
			stdin: "file:" + fixture("novelfull", "no-chapters.html"),
			want: map[string]any{
				"site": "novelfull", "series_id": "a-brand-new-novel", "title": "A Brand New Novel",
				"cover_url": "https://novelfull.com/uploads/thumbs/a-brand-new-novel-2a3b4c.jpg", "kind": "novel",
				"latest_chapter": nil, "latest_chapter_url": "", "completed": false,
			},
		},
		{
			name: "a Kagane body without --url names its Series by its own series_id",
			args: []string{"--site", "kagane", fixture("kagane", "completed.json")},
			want: map[string]any{
				"site": "kagane", "series_id": "019c2b1c-cc9b-745f-afed-09c230759162", "title": "Dungeon Porter",
				"cover_url": "https://kagane.to/api/v2/image/019c2b1c-aaaa-7bbb-8ccc-0d0e0f101112", "kind": "manga",
				"latest_chapter":     json.Number("40"),
				"latest_chapter_url": "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162/reader/019c2bda-0000-7000-8000-000000000003",
				"completed":          true,
			},
		},
		{
			name: "a completed LightNovelWorld page says completed",
			args: []string{"--site=lightnovelworld", "--url=https://lightnovelworld.org/novel/the-legendary-mechanic/", fixture("lightnovelworld", "completed.html")},
			want: map[string]any{
				"site": "lightnovelworld", "series_id": "the-legendary-mechanic", "title": "The Legendary Mechanic",
				"cover_url": "https://lightnovelworld.org/static/covers/the-legendary-mechanic.webp", "kind": "novel",
				"latest_chapter":     json.Number("1463"),
				"latest_chapter_url": "https://lightnovelworld.org/novel/the-legendary-mechanic/chapter/1463/",
				"completed":          true,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdin := tc.stdin
			if name, ok := strings.CutPrefix(stdin, "file:"); ok {
				b, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				stdin = string(b)
			}
			var out, errOut bytes.Buffer
			if err := runParse(context.Background(), tc.args, strings.NewReader(stdin), &out, &errOut, noEnv); err != nil {
				t.Fatalf("runParse: %v", err)
			}
			if bytes.Count(out.Bytes(), []byte("\n")) != 1 {
				t.Errorf("output is not one line:\n%s", out.String())
			}
			if got := decodeFacts(t, out.Bytes()); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestRunParseRefusesBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no --site", []string{fixture("asurascans", "ongoing.html")}, "--site is required"},
		{"an unknown site", []string{"--site", "mangadex", "x.html"}, "unknown site"},
		{"no file", []string{"--site", "asurascans"}, "expected one FILE"},
		{"two files", []string{"--site", "asurascans", "a.html", "b.html"}, "expected one FILE"},
		{"a file that does not exist", []string{"--site", "asurascans", "does-not-exist.html"}, "cannot read"},
		{"an unknown flag", []string{"--site", "asurascans", "--verbose", "x.html"}, "flag provided but not defined"},
		{"a --url of another Site", []string{"--site", "asurascans", "--url", "https://comix.to/title/k7yg7-x", fixture("asurascans", "ongoing.html")}, "is a comix address"},
		{"a --url that is not https", []string{"--site", "asurascans", "--url", "http://asurascans.com/comics/x", fixture("asurascans", "ongoing.html")}, "not https"},
		{"a page that is not the Site's Series page", []string{"--site", "asurascans", fixture("challenge", "cloudflare.html")}, "not a series page"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := runParse(context.Background(), tc.args, strings.NewReader(""), &out, &errOut, noEnv)
			if err == nil {
				t.Fatalf("runParse accepted it and printed %s", out.String())
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is more than one line: %q", err)
			}
			if out.Len() != 0 {
				t.Errorf("printed facts on bad input: %s", out.String())
			}
		})
	}
}
