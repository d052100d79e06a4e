package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Times are timestamptz in the database, NULL for "never" (migration 0016,
// docs/adr/0015-times-are-timestamptz.md), and cross the store's API as
// time.Time in UTC, the zero time for "never". pgx maps them; this file
// holds the rules it needs told: stamp (a time that may be never) and instant
// (one that always is, or a bound) on the way in, and nullTime (set on every
// connection by Tune) on the way out.

// stamp is t as a time column stores it: NULL for the zero time, else t to
// the millisecond, the precision the schema has always kept, so a time read
// back equals the one written as it always did.
func stamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.Truncate(time.Millisecond)
}

// instant is t as a column that always holds a time stores it, and as a
// bound a statement compares times with: the zero time is the Unix epoch,
// the 0 it was before migration 0016, so a row made at the zero time is
// still made, and "since the zero time" still reads every row.
func instant(t time.Time) time.Time {
	if t.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return t.Truncate(time.Millisecond)
}

// nullTime lets a *time.Time scan target read a timestamptz: NULL is the
// zero time, and every time is in UTC. pgx's own wrapper refuses NULL, and
// returns local time.
func nullTime(target any) (pgtype.WrappedScanPlanNextSetter, any, bool) {
	if t, ok := target.(*time.Time); ok {
		return &nullTimePlan{}, (*utcTime)(t), true
	}
	return nil, nil, false
}

type nullTimePlan struct{ next pgtype.ScanPlan }

func (p *nullTimePlan) SetNext(next pgtype.ScanPlan) { p.next = next }

func (p *nullTimePlan) Scan(src []byte, dst any) error {
	return p.next.Scan(src, (*utcTime)(dst.(*time.Time)))
}

// utcTime is the scan target nullTime hands pgx's timestamptz codec.
type utcTime time.Time

func (t *utcTime) ScanTimestamptz(v pgtype.Timestamptz) error {
	switch {
	case !v.Valid:
		*t = utcTime{}
	case v.InfinityModifier != pgtype.Finite:
		return fmt.Errorf("store: an infinite time cannot cross the API")
	default:
		*t = utcTime(v.Time.UTC())
	}
	return nil
}

// readTimes installs nullTime on a connection, ahead of pgx's wrappers.
func readTimes(_ context.Context, conn *pgx.Conn) error {
	m := conn.TypeMap()
	m.TryWrapScanPlanFuncs = append([]pgtype.TryWrapScanPlanFunc{nullTime}, m.TryWrapScanPlanFuncs...)
	return nil
}

// getOne runs a query expected to return one row, scanned by column name.
func getOne[T any](ctx context.Context, s *Store, sql string, args ...any) (T, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		var zero T
		return zero, translate(err)
	}
	v, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByNameLax[T])
	return v, translate(err)
}

// getMany runs a query and scans every row by column name.
func getMany[T any](ctx context.Context, s *Store, sql string, args ...any) ([]T, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, translate(err)
	}
	v, err := pgx.CollectRows(rows, pgx.RowToStructByNameLax[T])
	return v, translate(err)
}
