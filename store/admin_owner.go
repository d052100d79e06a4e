package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mangabookmark/mangabookmark/store/word"
)

// FailingSites reports, for each of sites, whether its failing list holds
// at least one Series, so the Lanes page links to that list only when it
// has something to show. One statement; each EXISTS stops at its first row
// of the failing predicate (the list's own), so no table is counted.
func (s *Store) FailingSites(ctx context.Context, sites []string, now time.Time) (map[string]bool, error) {
	out := make(map[string]bool, len(sites))
	if len(sites) == 0 {
		return out, nil
	}
	cols := make([]string, len(sites))
	args := pgx.NamedArgs{"cutoff": now.Add(-word.OwnerWindow).UnixMilli()}
	for i, site := range sites {
		p := fmt.Sprintf("site%d", i)
		args[p] = site
		cols[i] = `EXISTS (SELECT 1 FROM ` + adminFrom + ` WHERE ` + predicates[FilterFailing] + ` AND s.site = @` + p + `)`
	}
	vals := make([]bool, len(sites))
	dest := make([]any, len(sites))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := s.pool.QueryRow(ctx, `SELECT `+strings.Join(cols, ", "), customPlan, args).Scan(dest...); err != nil {
		return nil, fmt.Errorf("store: failing sites: %w", translate(err))
	}
	for i, site := range sites {
		out[site] = vals[i]
	}
	return out, nil
}
