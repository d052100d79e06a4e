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
// figures, the verdict's young facts, the freshness figure and the failing
// line in one statement (store.Batch.Landing), every condition of every
// Site in another, and the webhook's state; with the session read, at most
// four statements in two round trips, whatever the number of Series.
func handleAdminLanding(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, now := r.Context(), d.now()
		b := d.Store.NewBatch()
		var fig store.LandingFigures
		b.Landing(now, &fig)
		var finish func() notify.Verdict
		if d.Notices != nil {
			finish = d.Notices.QueueVerdict(b, now)
		}
		err := d.Store.Send(ctx, b)
		if !fig.Read {
			failStore(w, r, d.Logger, err, "The figures could not be read. Try again.", "admin landing: stats")
			return
		}
		stats := fig.Stats
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
			l.Verdict = verdict(d, finish(), fig.Young, now)
		default:
			l.Verdict = verdict(d, notify.Verdict{}, fig.Young, now)
		}
		l.Freshness = landingFreshness(d, fig.Fresh, fig.Young.Lanes, now)
		n, capped := figure(stats[store.FilterFailing])
		l.Failing = failingLineOf(fig.Failing.Points, fig.Failing.First, now, n, capped)
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
