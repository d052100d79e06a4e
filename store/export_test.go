package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/golang-migrate/migrate/v4"
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

const getFailureSQL = `SELECT outcome, failing_since FROM poll_failures WHERE site = $1 AND series_id = $2`

// GetFailure returns the failure row, or ErrNotFound when the Series is not failing.
func (s *Store) GetFailure(ctx context.Context, site, id string) (Failure, error) {
	v, err := getOne[Failure](ctx, s, getFailureSQL, site, id)
	if err != nil {
		return Failure{}, fmt.Errorf("store: get failure %s/%s: %w", site, id, err)
	}
	return v, nil
}

// MigrateDown reverts every migration (the migration test).
func MigrateDown(url string) error {
	m, err := newMigrate(url)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Down(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("store: migrate down: %w", err)
	}
	return nil
}

// FeedEntriesSQL exposes the feed's statement to its EXPLAIN test.
const FeedEntriesSQL = feedEntriesSQL

// StopRenewing stops the lease's renewer without ending the lease: what a
// holder that vanished leaves behind.
func (l *LaneLock) StopRenewing() {
	l.stop()
	l.renewed.Wait()
}

// The Idempotency-Key statements, for their EXPLAIN test.
var (
	ClaimKeySQL   = claimKeySQL
	FinishKeySQL  = finishKeySQL
	ReleaseKeySQL = releaseKeySQL
)

// The pictures' statements (issue 23, item 11), for their plan test.
var (
	PassStripSQL      = passStripSQL
	FailingHistorySQL = failingHistorySQL
	RecordFailingSQL  = recordFailingSQL
)

// AdminSeriesSQL is the detail page's read of one Series, for the EXPLAIN test.
var AdminSeriesSQL = adminSeriesSQL

// The removal's statements, for the EXPLAIN test.
const (
	NoteRemovedSQL   = noteRemovedSQL
	DropBookmarksSQL = dropBookmarksSQL
	// The address correction's move (issue 24, item 2).
	MoveBookmarksSQL = moveBookmarksSQL
)

// ExportBookmarksStatement is the statement of one export page, for the
// plan test.
func ExportBookmarksStatement(readerID, afterSite, afterID string, pageSize int) Queued {
	return Queued{SQL: exportBookmarksSQL, Args: []any{readerID, afterSite, afterID, pageSize}}
}
