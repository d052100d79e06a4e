package handlers

import (
	"net/http"
	"net/url"
	"time"

	"github.com/mangabookmark/mangabookmark/components"
	"github.com/mangabookmark/mangabookmark/notify"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/word"
)

// filterLabels are the words the owner reads for each filter.
var filterLabels = map[store.Filter]string{
	store.FilterAll:           "every Series",
	store.FilterNeverChecked:  "never checked",
	store.FilterStale:         "stale",
	store.FilterUnpollable:    "unpollable",
	store.FilterNoChapter:     "no chapter",
	store.FilterFailing:       "failing",
	store.FilterUnverified:    "unverified",
	store.FilterSiteCompleted: "site-completed",
	store.FilterFinished:      "finished",
	store.FilterOrphan:        "orphan",
}

func listHref(f store.Filter, site, kind, afterSite, afterID string) string {
	v := url.Values{}
	if f != store.FilterAll {
		v.Set("filter", string(f))
	}
	if site != "" {
		v.Set("site", site)
	}
	if kind != "" {
		v.Set("kind", kind)
	}
	if afterSite != "" || afterID != "" {
		v.Set("after", afterSite+":"+afterID)
	}
	if len(v) == 0 {
		return "/admin/series"
	}
	return "/admin/series?" + v.Encode()
}

// handleAdminLanding is /admin: the verdict line and one figure per filter.
func handleAdminLanding(d Deps) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, now := r.Context(), d.now()
		stats, err := d.Store.AdminStats(ctx, now)
		if err != nil {
			d.Logger.Error("admin landing: stats", "err", err)
			fail(w, r, d.Logger, http.StatusInternalServerError, "The figures could not be read. Try again.")
			return
		}
		var l components.Landing
		for _, f := range store.Filters {
			n, capped := stats[f], stats[f] > store.FigureCap
			if capped {
				n = store.FigureCap
			}
			l.Stats = append(l.Stats, components.Stat{Filter: string(f), Label: filterLabels[f], N: n, Capped: capped, Href: listHref(f, "", "", "", "")})
		}
		l.Verdict = verdict(d, r, now)
		l.Demo = d.Demo != nil
		render(w, r, d.Logger, http.StatusOK, components.AdminLanding(viewerFrom(ctx), l))
	})
}

// verdict reads the four conditions through the same derivation the push
// uses (Deps.Notices), and says when Discord has refused the webhook.
func verdict(d Deps, r *http.Request, now time.Time) components.Verdict {
	if d.Notices == nil {
		return components.Verdict{}
	}
	conds, err := d.Notices.Conditions(r.Context(), now)
	if err != nil {
		d.Logger.Error("admin landing: conditions", "err", err)
		return components.Verdict{Broken: true}
	}
	var v components.Verdict
	for _, c := range conds {
		v.Items = append(v.Items, components.VerdictItem{Kind: c.Kind, Site: c.Site, Age: word.Age(now.Sub(c.Since)), Href: notify.PagePath(c)})
	}
	v.WebhookDead = webhookDead(d, r, now)
	return v
}

// webhookDead is the age of Discord's "Unknown Webhook" answer, or "" while
// the webhook works (or none is configured).
func webhookDead(d Deps, r *http.Request, now time.Time) string {
	at, err := d.Notices.WebhookDeadAt(r.Context())
	if err != nil {
		d.Logger.Error("admin: webhook state", "err", err)
		return ""
	}
	if at.IsZero() {
		return ""
	}
	return word.Age(now.Sub(at))
}
