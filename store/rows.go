package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// getOne runs a query expected to return one row, scanned by column name.
func getOne[T any](ctx context.Context, s *Store, sql string, args ...any) (T, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		var zero T
		return zero, translate(err)
	}
	v, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[T])
	return v, translate(err)
}

// getMany runs a query and scans every row by column name.
func getMany[T any](ctx context.Context, s *Store, sql string, args ...any) ([]T, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, translate(err)
	}
	v, err := pgx.CollectRows(rows, pgx.RowToStructByName[T])
	return v, translate(err)
}
