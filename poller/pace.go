package poller

import (
	"fmt"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/word"
)

// Bounds of one pace in POLL_EVERY.
const (
	LeastPollEvery = time.Minute
	MostPollEvery  = 24 * time.Hour
)

// ParsePollEvery reads POLL_EVERY, each Lane's pace (its schedule.Policy's
// floor), written like SITE_BASE_URLS beside it: a comma-separated list
// whose bare duration is every Site's pace and whose site=duration pairs
// override it for one Site, e.g. `2h,asurascans=30m,novelfull=12h`. Empty
// is DefaultPollEvery everywhere. The answer holds every Site; an unknown
// Site, a Site or the bare pace given twice, or a pace outside
// [LeastPollEvery, MostPollEvery] is an error that starts with POLL_EVERY
// and names the part.
func ParsePollEvery(s string) (map[string]time.Duration, error) {
	every := DefaultPollEvery
	own := map[string]time.Duration{}
	bare := false
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		site, raw, pair := strings.Cut(part, "=")
		site, raw = strings.TrimSpace(site), strings.TrimSpace(raw)
		if !pair {
			raw, site = site, ""
		}
		d, err := time.ParseDuration(raw)
		if err != nil || d < LeastPollEvery || d > MostPollEvery {
			return nil, fmt.Errorf("POLL_EVERY: %q is not a duration between 1m and 24h, e.g. 1h or asurascans=30m", part)
		}
		switch {
		case !pair && bare:
			return nil, fmt.Errorf("POLL_EVERY: the pace of every Site is given twice")
		case !pair:
			every, bare = d, true
		case !word.KnownSite(site):
			return nil, fmt.Errorf("POLL_EVERY: unknown site %q", site)
		default:
			if _, dup := own[site]; dup {
				return nil, fmt.Errorf("POLL_EVERY: %s is given twice", site)
			}
			own[site] = d
		}
	}
	out := make(map[string]time.Duration, len(word.Sites))
	for _, site := range word.SiteNames() {
		out[site] = every
		if d, ok := own[site]; ok {
			out[site] = d
		}
	}
	return out, nil
}
