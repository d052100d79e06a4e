package store

import (
	"time"

	"github.com/jackc/pgx/v5"
)

// ListSQL exposes the list statement to the EXPLAIN test.
func ListSQL(q SeriesQuery, now time.Time) (string, pgx.NamedArgs, error) {
	return q.listSQL(now)
}

// Queued is one statement a Batch would send, for the EXPLAIN tests: they
// plan exactly what the pages run.
type Queued struct {
	SQL  string
	Args []any
}

// QueuedStatements lists what b would send.
func QueuedStatements(b *Batch) []Queued {
	var out []Queued
	for _, q := range b.b.QueuedQueries {
		out = append(out, Queued{q.SQL, q.Arguments})
	}
	return out
}
