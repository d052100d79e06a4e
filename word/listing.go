package word

// ListingFailed reports whether a listing read whose first page ended in o
// read nothing of the listing: the Site refused it, could not be reached,
// or answered with an error. Such a read says nothing about the listing's
// reader (a Broken listing is one the Site answered), but while it lasts
// the Lane finds new chapters by each Series' own reads only (ADR 0016).
func (o Outcome) ListingFailed() bool {
	return o == Refused || o == Unreachable || o == Errors
}

// ListingFailedOutcomes are the words ListingFailed holds for, for the
// store's predicates.
var ListingFailedOutcomes = []Outcome{Refused, Unreachable, Errors}

// ListingPlain is what a listing read whose first page ended in o did, in
// the owner's words, for a Site read over route r: unreachable on the
// browser route is the sidecar's, on the plain route our network not
// reaching the Site (docs/adr/0022).
func (o Outcome) ListingPlain(r Route) string {
	switch {
	case o == Unreachable && r == RouteBrowser:
		return "not reached (sidecar unreachable)"
	case o == Unreachable:
		return "not reached"
	case o == OK:
		return "read"
	}
	return o.Plain()
}
