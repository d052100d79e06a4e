package store

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// ListSQL exposes the list statement to the EXPLAIN test.
func ListSQL(q SeriesQuery, now time.Time) (string, pgx.NamedArgs, error) {
	if q.Limit <= 0 {
		q.Limit = 50
	}
	return q.listSQL(now)
}

// CountSQL exposes one figure's statement to the EXPLAIN test.
func CountSQL(q SeriesQuery, now time.Time) (string, pgx.NamedArgs, error) {
	where, args, err := q.where(now, false)
	return `SELECT count(*) FROM ` + adminFrom + ` WHERE ` + where, args, err
}
