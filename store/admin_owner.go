package store

import (
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// FailingSites queues, for each of sites, whether its failing list holds at
// least one Series, so the Lanes page links to that list only when it has
// something to show. One statement; each EXISTS is the failing list's own
// WHERE for one Site and stops at its first row, so nothing is counted.
func (b *Batch) FailingSites(sites []string, now time.Time, out map[string]bool) {
	if len(sites) == 0 {
		return
	}
	cols := make([]string, len(sites))
	args := pgx.NamedArgs{}
	for i, site := range sites {
		where, a, _ := SeriesQuery{Filter: FilterFailing, Site: site}.where(now, false) // a known Filter
		p := fmt.Sprintf("sites%d", i)
		cols[i] = `EXISTS (SELECT 1 FROM series s WHERE ` + strings.ReplaceAll(where, "@sites", "@"+p) + `)`
		args["cutoff"], args[p] = a["cutoff"], a["sites"]
	}
	vals := make([]bool, len(sites))
	dest := make([]any, len(sites))
	for i := range vals {
		dest[i] = &vals[i]
	}
	b.b.Queue(`SELECT `+strings.Join(cols, ", "), args).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(dest...); err != nil {
			return fmt.Errorf("store: failing sites: %w", translate(err))
		}
		for i, site := range sites {
			out[site] = vals[i]
		}
		return nil
	})
}
