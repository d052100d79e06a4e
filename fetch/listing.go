package fetch

import (
	"context"
	"fmt"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/word"
)

// ReadListing reads one page of a Site's latest-updates listing (CONTEXT.md,
// Listing), 1 being the newest. The request goes the way a Poll's goes
// (fetchTarget): the gate, SITE_BASE_URLS, the Site's turn under the same
// spacing as Polls and covers, the Site's route, the body cap, and the same
// classification. A 200 the Site's listing reader rejects is no_chapter
// (parsed to nothing); a real listing page without rows is ok with no
// entries.
func (r *Reader) ReadListing(ctx context.Context, site string, page int) adapters.ListingResult {
	a, ok := adapters.ByName(site)
	if !ok {
		return adapters.ListingResult{Outcome: word.Unfetchable, Err: fmt.Errorf("unknown site %q", site)}
	}
	l, ok := a.(adapters.Lister)
	if !ok {
		return adapters.ListingResult{Outcome: word.Unfetchable, Err: fmt.Errorf("%s has no listing reader", site)}
	}
	target := l.ListingTarget(page)
	// The browser route waits for the listing's own anchor: the Series
	// page's ReadySelector is not on a listing page.
	ready := ""
	if rs, ok := a.(adapters.ListingReadySelector); ok && !target.API {
		ready = rs.ListingReadySelector()
	}
	res, outcome, err := r.fetchTarget(ctx, site, a, target, ready)
	if err != nil {
		return adapters.ListingResult{Outcome: outcome, Err: err}
	}
	ans, parse := r.classifyAnswer(res)
	out := adapters.ListingResult{Outcome: ans.Outcome, Checked: ans.Checked, Status: ans.Status, RetryAfter: ans.RetryAfter, Err: ans.Err}
	if !parse {
		return out
	}
	listing, err := l.ParseListing(res.Body)
	if err != nil {
		// The anchor is missing (adapters.ErrNotListing): a moved layout or
		// another page. Never read as "no updates".
		out.Outcome, out.Err = word.NoChapter, err
		return out
	}
	out.Outcome, out.Listing = word.OK, listing
	return out
}
