package store

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Times are kept in the database as unix milliseconds, 0 for "never"
// (migration 0001), and cross the store's API as time.Time, the zero time for
// "never". This file is the one place that converts: ms on the way in,
// msTime and the row scanner on the way out.

// ms is t as a stored stamp: unix milliseconds, 0 for the zero time. A real
// time is never stored as 0 (which reads "never"): one at or before the
// epoch is stored as 1.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(t.UnixMilli(), 1)
}

// msTime is a stored stamp as a time in UTC, the zero time for 0.
func msTime(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// instant is a stored stamp that is never "never" (a pass's start, a
// failure's age), in UTC.
func instant(v int64) time.Time { return time.UnixMilli(v).UTC() }

// msScan scans a stored stamp into a time.Time; NULL is the zero time too.
type msScan struct{ t *time.Time }

func (m msScan) ScanInt64(v pgtype.Int8) error {
	if !v.Valid {
		*m.t = time.Time{}
		return nil
	}
	*m.t = msTime(v.Int64)
	return nil
}

var timeType = reflect.TypeFor[time.Time]()

// fieldPaths maps each db-tagged field of a struct type (through embedded
// structs) to its index path, once per type.
var fieldPaths sync.Map // reflect.Type -> map[string][]int

func pathsOf(t reflect.Type) map[string][]int {
	if v, ok := fieldPaths.Load(t); ok {
		return v.(map[string][]int)
	}
	out := map[string][]int{}
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			path := append(append([]int(nil), prefix...), i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(f.Type, path)
				continue
			}
			if name := f.Tag.Get("db"); f.IsExported() && name != "" && name != "-" {
				out[name] = path
			}
		}
	}
	walk(t, nil)
	fieldPaths.Store(t, out)
	return out
}

// rowTo scans a row into T by column name, the way pgx.RowToStructByName
// does, except that a time.Time field reads a stored stamp.
func rowTo[T any](row pgx.CollectableRow) (T, error) {
	var v T
	rv := reflect.ValueOf(&v).Elem()
	paths := pathsOf(rv.Type())
	fds := row.FieldDescriptions()
	dest := make([]any, len(fds))
	for i, fd := range fds {
		path, ok := paths[fd.Name]
		if !ok {
			return v, fmt.Errorf("store: column %q has no field in %s", fd.Name, rv.Type())
		}
		f := rv.FieldByIndex(path)
		if f.Type() == timeType {
			dest[i] = msScan{f.Addr().Interface().(*time.Time)}
		} else {
			dest[i] = f.Addr().Interface()
		}
	}
	return v, row.Scan(dest...)
}

// getOne runs a query expected to return one row, scanned by column name.
func getOne[T any](ctx context.Context, s *Store, sql string, args ...any) (T, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		var zero T
		return zero, translate(err)
	}
	v, err := pgx.CollectExactlyOneRow(rows, rowTo[T])
	return v, translate(err)
}

// getMany runs a query and scans every row by column name.
func getMany[T any](ctx context.Context, s *Store, sql string, args ...any) ([]T, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, translate(err)
	}
	v, err := pgx.CollectRows(rows, rowTo[T])
	return v, translate(err)
}
