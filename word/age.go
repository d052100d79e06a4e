package word

import (
	"strconv"
	"time"
)

// JustNow is how long after a moment it still reads "just now": a moment
// that young is the click the owner just made, and a count of seconds would
// only tick.
const JustNow = 10 * time.Second

// Age writes a duration the way the owner reads it, one style on every page,
// embed and command: whole units, the largest that reads naturally
// ("12 seconds", "1 minute", "45 minutes", "3 hours", "4 days", "3 months",
// "2 years"). Under a minute it counts seconds, so a token made a moment ago
// never claims a minute.
func Age(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d < time.Minute:
		return unit(max(int(d/time.Second), 1), "second")
	case d < 2*time.Minute:
		return "1 minute"
	case d < time.Hour:
		return unit(int(d/time.Minute), "minute")
	case d < 2*day:
		return unit(int(d/time.Hour), "hour")
	case d < 60*day:
		return unit(int(d/day), "day")
	case d < 2*365*day:
		return unit(int(d/(30*day)), "month")
	default:
		return unit(int(d/(365*day)), "year")
	}
}

// Ago is how long ago a moment was, d after it: "just now" under JustNow
// (and for a moment a little ahead of this clock), else "Age ago". Every
// relative time on the pages is written by it.
func Ago(d time.Duration) string {
	if d < JustNow {
		return "just now"
	}
	return Age(d) + " ago"
}

func unit(n int, name string) string {
	if n == 1 {
		return "1 " + name
	}
	return strconv.Itoa(n) + " " + name + "s"
}
