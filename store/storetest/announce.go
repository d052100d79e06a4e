package storetest

import "time"

// ReaderSettings is a reader_settings row (migration 0018); Zone is UTC
// unless set.
type ReaderSettings struct {
	Reader              string
	Discord, Feed, Push bool
	Digest              bool
	DigestHour          int
	Zone                string
	UpdatedAt           time.Time
}

func (ReaderSettings) table() string { return "reader_settings" }
func (ReaderSettings) columns() []string {
	return []string{"reader_id", "discord", "feed", "push", "digest", "digest_hour", "zone", "updated_at"}
}
func (r ReaderSettings) values() []any {
	zone := r.Zone
	if zone == "" {
		zone = "UTC"
	}
	return []any{r.Reader, r.Discord, r.Feed, r.Push, r.Digest, int16(r.DigestHour), zone, instant(r.UpdatedAt)}
}
