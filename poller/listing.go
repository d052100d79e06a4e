package poller

import (
	"context"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/poller/schedule"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// ListingReader reads one page of a Site's latest-updates listing through
// the same gate, route and classification as a Poll (fetch.Reader is one).
// A Reader that is not also a ListingReader reads no listing.
type ListingReader interface {
	ReadListing(ctx context.Context, site string, page int) adapters.ListingResult
}

// walked is what a listing walk did, for the pass.
type walked struct {
	store.ListingPass
	refused     bool          // a page was refused: one refusal toward the pass's two
	retryAfter  time.Duration // the refusal's Retry-After
	browserDown bool          // the sidecar is gone: the pass stops
}

// readListing walks the Site's listing when one is owed
// (schedule.ListingEvery): page after page, each one request under the
// Lane's spacing, until a page repeats an entry seen before, names nothing,
// or the cap (schedule.Walk). It marks the known Series named above their
// Latest Chapter, so the due query reads them next, and writes nothing
// else about any Series (ADR 0016): a page that cannot be read is counted
// in the pass log and costs the Series nothing.
func (p *Poller) readListing(ctx context.Context, site string, l *lane, ln store.Lane) (w walked) {
	lr, ok := p.reader.(ListingReader)
	now := p.now()
	every, on := schedule.ListingEvery(p.cfg.ListingEvery, ln.ListingEmptySince, now)
	l.listing.Store(ok && on && !schedule.Broken(ln.ListingEmptySince, now))
	if !ok || !on || now.Before(l.listingAt) {
		return w
	}
	l.listingAt = now.Add(every)
	pages := schedule.MaxListingPages
	if schedule.Broken(ln.ListingEmptySince, now) {
		pages = 1 // tried now and then, so a fixed reader is noticed
	}
	defer l.walk.Done()
	first := word.Outcome("")
	// Every walk is recorded, whatever it ended in, once it is over: the
	// pages read it from the database, never from this process. A walk the
	// shutdown cut short says nothing about the Site.
	defer func() {
		if first != "" && ctx.Err() == nil {
			p.recordListing(ctx, site, store.ListingAttempt{TriedAt: now, Outcome: first, Entries: w.Entries, Marked: w.Marked})
		}
	}()
	for page := 1; page <= pages; page++ {
		if !p.space(ctx, l) {
			return w
		}
		res := p.readListingPage(ctx, site, l, lr, page)
		w.Pages++
		w.Outcome = res.Outcome
		if page == 1 {
			first = res.Outcome
		}
		if res.Outcome != word.OK {
			p.listingFailed(site, page, res, &w)
			return w
		}
		w.Entries += len(res.Listing.Entries)
		w.Marked += p.markListed(ctx, site, res.Listing.Entries)
		if !l.walk.Page(page, res.Listing) {
			return w
		}
	}
	return w
}

func (p *Poller) readListingPage(ctx context.Context, site string, l *lane, lr ListingReader, page int) adapters.ListingResult {
	rctx, cancel := context.WithTimeout(ctx, p.cfg.ReadTimeout)
	defer cancel()
	res := lr.ReadListing(rctx, site, page)
	l.requested()
	if !res.Outcome.Valid() {
		res = adapters.ListingResult{Outcome: word.Errors, Status: res.Status, Err: res.Err}
	}
	return res
}

// listingFailed logs a page that was not read, and notes what the pass
// must do about it: a refusal counts toward the Lane's two, and a lost
// sidecar stops every browser Lane, as for a Poll.
func (p *Poller) listingFailed(site string, page int, res adapters.ListingResult, w *walked) {
	p.log().Warn("listing not read", "site", site, "page", page, "outcome", res.Outcome,
		"status", res.Status, "err", res.Err)
	switch {
	case res.Outcome == word.Refused:
		w.refused, w.retryAfter = true, res.RetryAfter
	case res.Outcome == word.Unreachable && p.reader.Route(site) == word.RouteBrowser:
		p.markBrowserDown(p.now())
		w.browserDown = true
	}
}

// recordListing keeps the Lane's listing state from one walk
// (store.RecordListing): a walk whose first page failed counts toward how
// long the listing has failed; one the Site answered names Series or it
// does not (twelve hours of not is a broken listing reader).
func (p *Poller) recordListing(ctx context.Context, site string, a store.ListingAttempt) {
	if err := p.st.RecordListing(ctx, site, a); err != nil {
		p.failed("listing state not recorded", err, "site", site)
	}
}

// markListed marks the known Series a page names (store.MarkListed) and
// returns how many it made urgent; an error is logged and marks none.
func (p *Poller) markListed(ctx context.Context, site string, entries []adapters.ListingEntry) int {
	rows := make([]store.Listed, 0, len(entries))
	for _, e := range entries {
		if e.Ref.Site == site && e.Chapter != "" {
			rows = append(rows, store.Listed{SeriesID: e.Ref.SeriesID, Chapter: string(e.Chapter)})
		}
	}
	n, err := p.st.MarkListed(ctx, site, rows, p.now())
	if err != nil {
		p.failed("listing not marked", err, "site", site, "rows", len(rows))
		return 0
	}
	return n
}
