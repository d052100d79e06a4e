// Package repeat keeps a failure that recurs on every tick of a loop (a
// Lane asking for its lease while the database is away, a webhook failing
// on every pass) to a few log lines: the first at once, then at most one a
// minute saying how many came meanwhile, and one line when it clears. The
// promise is one log line per failure, not one per tick (CONTEXT.md, What
// the server promises).
package repeat

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Every is how often a run of failures that keeps going logs again.
const Every = time.Minute

// Log is a logger of runs of failures, keyed by their message and subject.
// It is safe for concurrent use.
type Log struct {
	log *slog.Logger
	now func() time.Time

	mu   sync.Mutex
	runs map[key]*run
}

type key struct{ msg, subject string }

// run is one failure's run: since its first, how many in all, and how many
// since its last line.
type run struct {
	since, said   time.Time
	total, unsaid int
}

// New logs through log on the clock now (nil: time.Now).
func New(log *slog.Logger, now func() time.Time) *Log {
	if now == nil {
		now = time.Now
	}
	return &Log{log: log, now: now, runs: map[key]*run{}}
}

// Fail notes one failure msg names, of subject (a Site, a channel; "" for
// none). The first of a run is logged at level with args; later ones are
// counted, and once Every has passed since the last line one more line,
// with the latest args, says how many came ("repeated") since the run
// began ("since").
func (l *Log) Fail(level slog.Level, subject, msg string, args ...any) {
	now := l.now()
	l.mu.Lock()
	k := key{msg, subject}
	r, ok := l.runs[k]
	if !ok {
		l.runs[k] = &run{since: now, said: now, total: 1}
		l.mu.Unlock()
		l.log.Log(context.Background(), level, msg, args...)
		return
	}
	r.total++
	r.unsaid++
	if now.Sub(r.said) < Every {
		l.mu.Unlock()
		return
	}
	n, since := r.unsaid, r.since
	r.said, r.unsaid = now, 0
	l.mu.Unlock()
	l.log.Log(context.Background(), level, msg, append(args, "repeated", n, "since", since.UTC().Format(time.RFC3339))...)
}

// Clear ends the run of msg for subject, if one is going, with one Info
// line saying it recovered, after how many failures and how long.
func (l *Log) Clear(subject, msg string, args ...any) {
	now := l.now()
	l.mu.Lock()
	k := key{msg, subject}
	r, ok := l.runs[k]
	delete(l.runs, k)
	l.mu.Unlock()
	if !ok {
		return
	}
	l.log.Info(msg+": recovered", append(args, "failures", r.total, "lasted", now.Sub(r.since).Round(time.Second).String())...)
}
