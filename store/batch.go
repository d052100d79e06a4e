package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Batch gathers independent reads of one page so they travel to PostgreSQL
// in one round trip (pgx.Batch). Each queued read names where its result
// goes; the destinations are filled when Send returns nil. A page's reads
// are independent by construction (none needs another's answer), so
// batching changes when they run, never what they say.
type Batch struct {
	b pgx.Batch
}

// NewBatch starts an empty batch.
func (s *Store) NewBatch() *Batch { return &Batch{} }

// Send runs every queued read in one round trip and fills their
// destinations; the first failure is returned and later ones are not read.
func (s *Store) Send(ctx context.Context, b *Batch) error {
	if b.b.Len() == 0 {
		return nil
	}
	return translate(s.pool.SendBatch(ctx, &b.b).Close())
}

// queueMany queues a read of many rows scanned by column name into dst.
func queueMany[T any](b *Batch, what string, dst *[]T, sql string, args ...any) {
	b.b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
		v, err := pgx.CollectRows(rows, pgx.RowToStructByNameLax[T])
		if err != nil {
			return fmt.Errorf("store: %s: %w", what, translate(err))
		}
		*dst = v
		return nil
	})
}

// queueRow queues a one-row read scanned into dest.
func (b *Batch) queueRow(what, sql string, args []any, dest ...any) {
	b.b.Queue(sql, args...).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(dest...); err != nil {
			return fmt.Errorf("store: %s: %w", what, translate(err))
		}
		return nil
	})
}

// ListAdminSeries queues one page of the owner's Series list into page.
func (b *Batch) ListAdminSeries(q SeriesQuery, now time.Time, page *AdminSeriesPage) error {
	sql, args, err := q.listSQL(now)
	if err != nil {
		return err
	}
	limit := args["limit"].(int) - 1
	b.b.Queue(sql, args).Query(func(rows pgx.Rows) error {
		v, err := pgx.CollectRows(rows, pgx.RowToStructByNameLax[AdminSeries])
		if err != nil {
			return fmt.Errorf("store: list admin series %q: %w", q.Filter, translate(err))
		}
		page.Rows, page.More = v, false
		if len(v) > limit {
			page.Rows, page.More = v[:limit], true
		}
		if q.Before {
			// Read backwards from the cursor; shown in the list's own order.
			slices.Reverse(page.Rows)
		}
		return nil
	})
	return nil
}

// CountAdminSeries queues the list's caption count into n (see FigureCap).
func (b *Batch) CountAdminSeries(q SeriesQuery, now time.Time, n *int64) error {
	where, args, err := q.where(now, false)
	if err != nil {
		return err
	}
	args["cap"] = FigureCap + 1
	b.queueRow("count admin series "+string(q.Filter), `SELECT `+countSQL(where), []any{args}, n)
	return nil
}

// AdminStats queues every landing figure into out, keyed by filter: one
// statement holding each filter's capped count, the very subquery its list
// caption runs (with no Site or kind).
func (b *Batch) AdminStats(now time.Time, out map[Filter]int64) {
	cols, args := statsColumns(now)
	vals := make([]int64, len(Filters))
	b.b.Queue(`SELECT `+cols, args).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(statsDest(vals)...); err != nil {
			return fmt.Errorf("store: admin stats: %w", translate(err))
		}
		statsInto(out, vals)
		return nil
	})
}

// statsColumns is every landing figure as a column of one SELECT, in
// Filters' order, with their arguments.
func statsColumns(now time.Time) (string, pgx.NamedArgs) {
	cols := make([]string, len(Filters))
	var args pgx.NamedArgs
	for i, f := range Filters {
		where, a, _ := SeriesQuery{Filter: f}.where(now, false) // every Filter is known
		cols[i], args = countSQL(where), a
	}
	args["cap"] = FigureCap + 1
	return strings.Join(cols, ",\n"), args
}

// statsDest is where statsColumns scan to: one value a Filter.
func statsDest(vals []int64) []any {
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	return dest
}

// statsInto keys the scanned figures by filter.
func statsInto(out map[Filter]int64, vals []int64) {
	for i, f := range Filters {
		out[f] = vals[i]
	}
}
