package adapters

import (
	"net/url"
	"strings"
	"testing"
)

func TestAPastedAddressGetsHTTPSOnlyWhenItNamesNoScheme(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"a host and path get https", "asurascans.com/comics/solo-max-level-newbie-5fa3b2c1", "https://asurascans.com/comics/solo-max-level-newbie-5fa3b2c1"},
		{"spaces around are dropped", "  novelfull.com/reverend-insanity.html ", "https://novelfull.com/reverend-insanity.html"},
		{"a scheme-relative address gets https", "//kagane.to/series/x", "https://kagane.to/series/x"},
		{"https stays", "https://asurascans.com/comics/x", "https://asurascans.com/comics/x"},
		{"http stays, to be refused", "http://asurascans.com/comics/x", "http://asurascans.com/comics/x"},
		{"another scheme stays", "javascript:alert(1)", "javascript:alert(1)"},
		{"nothing stays nothing", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Pasted(c.in); got != c.want {
				t.Errorf("Pasted(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
	ref, err := Recognise(Pasted("asurascans.com/comics/nano-machine-7f873ca6"))
	if err != nil || ref.Site != "asurascans" || ref.SeriesID != "nano-machine" {
		t.Errorf("a scheme-less Asura address is recognised as %+v, %v", ref, err)
	}
	if _, err := Recognise(Pasted("http://asurascans.com/comics/nano-machine-7f873ca6")); err == nil {
		t.Errorf("an http address is recognised once pasted")
	}
}

// FuzzPasted: an address that names a scheme is never changed, one that
// names none only gains "https:" or "https://" in front, and what Recognise
// accepted before pasting it accepts after, as the same Series.
func FuzzPasted(f *testing.F) {
	for _, s := range []string{"asurascans.com/comics/x", "https://kagane.to/series/x", "//novelfull.com/a.html", "http://x", "a:b", " ", "%zz/x", "javascript:alert(1)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, trimmed := Pasted(raw), strings.TrimSpace(raw)
		if u, err := url.Parse(trimmed); err == nil && u.Scheme != "" && got != trimmed {
			t.Fatalf("%q names a scheme but became %q", raw, got)
		}
		if got != trimmed && got != "https:"+trimmed && got != "https://"+trimmed {
			t.Fatalf("%q became %q", raw, got)
		}
		if before, err := Recognise(raw); err == nil {
			after, err := Recognise(got)
			if err != nil || after != before {
				t.Fatalf("%q: recognised as %+v before pasting, %+v (%v) after", raw, before, after, err)
			}
		}
	})
}
