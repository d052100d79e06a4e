package demo

import (
	"fmt"
	"strings"
	"testing"
)

// The demo is the product's shop window: after its first passes every Series
// a Lane reads shows its cover (a real image the stand-in served, kept in
// covers) and its title from its page, never its id. The hostile Site
// refuses every request by design, so its Series are never read and keep
// neither.
func TestTheDemoShowsEveryReadSeriesWithItsCoverAndTitle(t *testing.T) {
	t.Parallel()
	d := startDemo(t)
	var want []string
	for site, ds := range d.w.sites {
		if site == demoHostile || (d.w.sidecar == nil && (site == "comix" || site == "kagane")) {
			continue
		}
		for _, s := range ds.Series {
			want = append(want, site+"/"+s.Ref.SeriesID)
		}
	}
	d.waitFor("a cover and a title on every Series the demo reads", func() (bool, string) {
		var missing []string
		for _, key := range want {
			site, id, _ := strings.Cut(key, "/")
			state := d.scalar(`SELECT format('title=%s cover=%s', coalesce(s.title, ''), coalesce(c.content_type, 'none'))
				FROM series s LEFT JOIN covers c USING (site, series_id) WHERE s.site = $1 AND s.series_id = $2`, site, id)
			if strings.HasSuffix(state, "cover=none") || strings.HasPrefix(state, "title= ") || strings.Contains(state, "title="+id+" ") {
				missing = append(missing, key+" "+state)
			}
		}
		return len(missing) == 0, fmt.Sprint(missing)
	})
	owner := d.signIn("owner")
	rows := d.page(owner, "/admin/series").Find(`[data-series-id]`)
	if n := rows.Find(`[data-testid="cover"]`).Length(); n < len(want) {
		t.Errorf("/admin/series draws %d covers, want one on each of the %d Series read", n, len(want))
	}
	d.shoot(owner, map[string]string{"series": "/admin/series"})
	ada := d.signIn("Ada")
	if n := d.page(ada, "/").Find(`[data-testid="cover"]`).Length(); n == 0 {
		t.Errorf("Ada's / draws no cover")
	}
	d.shoot(ada, map[string]string{"reader": "/"})
}
