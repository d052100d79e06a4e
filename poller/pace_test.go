package poller_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/poller"
	"github.com/mangabookmark/mangabookmark/word"
)

func TestPollEveryReadsLikeSiteBaseURLs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want map[string]time.Duration // the Sites off the default
		def  time.Duration
	}{
		{"", nil, poller.DefaultPollEvery},
		{"2h", nil, 2 * time.Hour},
		{"asurascans=30m", map[string]time.Duration{"asurascans": 30 * time.Minute}, poller.DefaultPollEvery},
		{" 6h , asurascans = 2h, novelfull=12h ,", map[string]time.Duration{"asurascans": 2 * time.Hour, "novelfull": 12 * time.Hour}, 6 * time.Hour},
	}
	for _, c := range cases {
		got, err := poller.ParsePollEvery(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		for _, site := range word.SiteNames() {
			want, ok := c.want[site]
			if !ok {
				want = c.def
			}
			if got[site] != want {
				t.Errorf("%q: %s paces %v, want %v", c.in, site, got[site], want)
			}
		}
	}
}

func TestABadPollEveryNamesItsPart(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"mangadex=1h":       `unknown site "mangadex"`,
		"often":             `"often" is not a duration`,
		"30s":               `"30s" is not a duration`,
		"novelfull=25h":     `"novelfull=25h" is not a duration`,
		"1h,2h":             "every Site is given twice",
		"comix=1h,comix=2h": "comix is given twice",
		"asurascans=":       `"asurascans=" is not a duration`,
		"=1h":               `unknown site ""`,
	} {
		_, err := poller.ParsePollEvery(in)
		if err == nil || !strings.HasPrefix(err.Error(), "POLL_EVERY: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want POLL_EVERY: …%s", in, err, want)
		}
	}
}

// Whatever the environment holds, the parser answers a pace within bounds
// for every Site, or an error naming the setting.
func FuzzParsePollEvery(f *testing.F) {
	for _, s := range []string{"", "1h", "2h,asurascans=30m", "x=y", ",,=", "1h,1h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := poller.ParsePollEvery(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "POLL_EVERY: ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q", err)
			}
			return
		}
		if len(got) != len(word.Sites) {
			t.Fatalf("%d Sites paced", len(got))
		}
		for site, d := range got {
			if d < poller.LeastPollEvery || d > poller.MostPollEvery {
				t.Fatalf("%s paced %v", site, d)
			}
		}
	})
}
