package handlers

import (
	"net/http"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store"
)

func listHref(f store.Filter, site, kind, afterSite, afterID string) string {
	return queryHref(store.SeriesQuery{Filter: f, Site: site, Kind: kind, AfterSite: afterSite, AfterID: afterID})
}

// handleAdminLanding is /admin: the verdict line and one figure per filter.
// Its reads are independent, so they go to PostgreSQL in one batch: the
// figures (one statement), every condition of every Site (one statement),
// the webhook's state and the Series failing for less than ownerWindow, then
// the freshness figure and the failing line (issue 23, item 11); with the
// session read, six statements in two round trips, whatever the number of
// Series.
func handleAdminLanding(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, now := r.Context(), d.now()
		b := d.Store.NewBatch()
		stats := map[store.Filter]int64{}
		b.AdminStats(now, stats)
		var finish func() notify.Verdict
		if d.Notices != nil {
			finish = d.Notices.QueueVerdict(b, now)
		}
		var young store.Young // the verdict's "too early to tell"
		b.Young(now, &young)
		// Queued last: the batch stops at its first failure, so this figure
		// never keeps the verdict from being read (N stays -1 when unread).
		fresh := store.Delays{N: -1}
		b.FreshnessAll(now, &fresh)
		var failing store.FailingHistoryRead
		b.FailingHistory(now, &failing)
		err := d.Store.Send(ctx, b)
		if len(stats) == 0 {
			failStore(w, r, d.Logger, err, "The figures could not be read. Try again.", "admin landing: stats")
			return
		}
		var l components.Landing
		for _, f := range store.Filters {
			n, capped := figure(stats[f])
			w := filterWords[f]
			l.Stats = append(l.Stats, components.Stat{Filter: string(f), Label: w.label, Meaning: w.meaning,
				N: n, Capped: capped, Fault: w.fault && n > 0, Href: listHref(f, "", "", "", "")})
		}
		l.Empty = stats[store.FilterAll] == 0
		switch {
		case err != nil:
			// The figures arrived; the conditions, sent after them, did not.
			d.Logger.Error("admin landing: conditions", "err", err)
			l.Verdict = components.Verdict{Broken: true}
		case finish != nil:
			l.Verdict = verdict(d, finish(), young, now)
		default:
			l.Verdict = verdict(d, notify.Verdict{}, young, now)
		}
		l.Freshness = components.LandingFreshness{Broken: true}
		if fresh.N >= 0 {
			l.Freshness = landingFreshness(d, fresh, young.Lanes, now)
		}
		l.Failing = components.FailingLine{Broken: true}
		if failing.Read {
			n, capped := figure(stats[store.FilterFailing])
			l.Failing = failingLineOf(failing.Points, now, n, capped)
		}
		l.Demo = d.Demo != nil
		render(w, r, d.Logger, http.StatusOK, components.AdminLanding(viewerFrom(ctx), l))
	})
}

// figure is how every capped figure and caption count reads: exact up to
// store.FigureCap, and the cap with a "+" above it.
func figure(n int64) (int64, bool) {
	if n > store.FigureCap {
		return store.FigureCap, true
	}
	return n, false
}
