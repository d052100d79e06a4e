package freshness

import "time"

// outageKind is how a listing in an outage answers nothing. The two differ
// in what the Lane makes of them (ADR 0016, a broken listing): a page the
// Site answers but that names nothing counts toward a broken listing
// reader, a page that is not reached says nothing about the reader.
type outageKind string

const (
	// unreachable: no page is answered (the Site or the route is down).
	unreachable outageKind = "unreachable"
	// empty: every page is answered and names nothing.
	empty outageKind = "empty"
)

// outage is when the listing answers nothing: ListingDown long, centred in
// the measured window (after the warm-up, up to the horizon) and starting
// on the hour, so the releases before it, in it and after it are all
// measured. At the defaults (720 h, 24 h warm-up) a 24-hour outage is
// hours 360 to 384, in the steady state after the first backstop week.
func (c Config) outage() (from, to time.Duration) {
	if c.ListingDown <= 0 {
		return 0, 0
	}
	from = (c.Warmup + (c.Horizon-c.Warmup-c.ListingDown)/2).Truncate(time.Hour)
	return from, from + c.ListingDown
}

// downAs is how the listing answers during the outage (unreachable
// unless Config says empty), or "" at t outside it.
func (c Config) downAs(t time.Duration) outageKind {
	if from, to := c.outage(); t < from || t >= to {
		return ""
	}
	return c.outageKind()
}

// outageKind is ListingDownAs, its zero value unreachable.
func (c Config) outageKind() outageKind {
	if c.ListingDownAs == empty {
		return empty
	}
	return unreachable
}

// omitted reports whether the listing leaves out the row of release j:
// each release's row is drawn once (site.omit), so a row missed stays
// missed on every walk until the Series releases again, as on a Site
// whose listing skips an update; and a run at a higher loss omits every
// row a lower one does.
func (c Config) omitted(st *site, j int) bool {
	return c.ListingLoss > 0 && float64(st.omit[j]) < c.ListingLoss
}
