package word

import (
	"strconv"
	"time"
)

// Age writes a duration the way the owner reads it, one style on every page,
// embed and command: whole units, the largest that reads naturally
// ("1 minute", "45 minutes", "3 hours", "4 days", "3 months", "2 years").
func Age(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
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

func unit(n int, name string) string {
	if n == 1 {
		return "1 " + name
	}
	return strconv.Itoa(n) + " " + name + "s"
}
