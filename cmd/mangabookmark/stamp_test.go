package main

import "time"

// msT is a stored stamp in unix milliseconds as the store's API speaks it:
// the zero time for 0 ("never"), else the instant in UTC.
func msT(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
