package store

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// StatementLog is what one request sent PostgreSQL: how many statements,
// in how many round trips (a lone statement, or one batch), and the time
// they took as the server saw it. The request log line carries it, so the
// server's own log says what each page costs (`make bench` reads it).
type StatementLog struct {
	mu         sync.Mutex
	statements int
	roundTrips int
	sql        time.Duration
}

// Read returns the counts so far.
func (l *StatementLog) Read() (statements, roundTrips int, sql time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.statements, l.roundTrips, l.sql
}

func (l *StatementLog) add(statements, roundTrips int, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.statements += statements
	l.roundTrips += roundTrips
	l.sql += d
}

type statementLogKey struct{}

type startedKey struct{}

// WithStatementLog returns a context whose statements are counted in the
// returned log.
func WithStatementLog(ctx context.Context) (context.Context, *StatementLog) {
	l := &StatementLog{}
	return context.WithValue(ctx, statementLogKey{}, l), l
}

// statementTracer feeds the StatementLog of the statement's context, if
// any; everything else costs one context lookup.
type statementTracer struct{}

func logOf(ctx context.Context) *StatementLog {
	l, _ := ctx.Value(statementLogKey{}).(*StatementLog)
	return l
}

func started(ctx context.Context) context.Context {
	if logOf(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, startedKey{}, time.Now())
}

func since(ctx context.Context) time.Duration {
	t, ok := ctx.Value(startedKey{}).(time.Time)
	if !ok {
		return 0
	}
	return time.Since(t)
}

func (statementTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return started(ctx)
}

func (statementTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if l := logOf(ctx); l != nil {
		l.add(1, 1, since(ctx))
	}
}

func (statementTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return started(ctx)
}

func (statementTracer) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchQueryData) {
	if l := logOf(ctx); l != nil {
		l.add(1, 0, 0)
	}
}

func (statementTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	if l := logOf(ctx); l != nil {
		l.add(0, 1, since(ctx))
	}
}
