package word

import (
	"errors"
	"time"
)

// When writes a moment the way every page and the notices command print
// one: day, month and clock time in the owner's time zone, with the zone's
// name ("3 Dec 06:44 CET"). The one formatter, so a moment never reads one
// way here and another there; a page puts it in a <time> element whose
// datetime keeps the instant machine-readable (RFC 3339, UTC).
func When(t time.Time, zone *time.Location) string {
	if zone == nil {
		zone = time.UTC
	}
	return t.In(zone).Format("2 Jan 15:04 MST")
}

// Day is the day alone of When ("3 Dec"), for a short tag whose <time>
// carries When in its title; the same zone, so the two never disagree.
func Day(t time.Time, zone *time.Location) string {
	if zone == nil {
		zone = time.UTC
	}
	return t.In(zone).Format("2 Jan")
}

// MachineTime is t as a <time datetime> and a JSON field carry it.
func MachineTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ParseZone reads the TIME_ZONE setting: an IANA name ("Europe/Berlin",
// "UTC"), or "" and "Local" for the server's own zone. The names come from
// the binary's embedded zone database when the system has none.
func ParseZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return time.Local, nil
	}
	z, err := time.LoadLocation(name)
	if err != nil {
		return nil, errors.New("must be a time zone name such as Europe/Berlin, UTC or Local")
	}
	return z, nil
}
