package adapters

import "net/url"

// listedSeries is the Series a listing row links to: the link resolved
// against the listing's address (cleanURL: only an absolute http(s) address
// survives) and recognised by the Site's own Recognise, so another host, a
// lookalike or a page that is not a Series never counts as one.
func listedSeries(a Adapter, base *url.URL, href string) (Ref, bool) {
	abs := cleanURL(base, href)
	if abs == "" {
		return Ref{}, false
	}
	u, err := url.Parse(abs)
	if err != nil {
		return Ref{}, false
	}
	return a.Recognise(u)
}

// listingPage is a page number as the listings count them, 1 being the newest;
// anything lower is page 1.
func listingPage(page int) int { return max(page, 1) }
