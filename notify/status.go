package notify

import (
	"context"
	"fmt"
	"time"

	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// Notice is one open owner notice as the notices command and the Lanes page
// show it.
type Notice struct {
	Kind word.NoticeKind
	Site string
	// Holds is false when the condition no longer derives: the notice closes
	// on the responsible Lane's next pass.
	Holds bool
	Since time.Time // when the condition began (zero unless Holds)
	// SentAt is when Discord accepted the message; zero while pending.
	SentAt time.Time
	// MayNotHaveArrived: the message was sent and no answer came (or its
	// sender stopped mid-send). It counts as sent and is not sent again
	// (docs/adr/0005); SentAt is when it went.
	MayNotHaveArrived bool
	Attempts          int
	LastAttemptAt     time.Time
	LastError         string // free of the webhook address
	RetryNotBefore    time.Time
	// GaveUp: Discord refused the message itself (a 4xx other than 404 and
	// 429); it is tried again from RetryNotBefore, an hour on.
	GaveUp bool
}

// Pending reports whether the owner has not been told yet.
func (nt Notice) Pending() bool { return nt.SentAt.IsZero() }

// Status is the whole state of the push, for the notices command and /admin.
type Status struct {
	Enabled bool
	// WebhookDeadAt is when Discord answered 404 for the configured webhook;
	// zero while it is alive (or none is configured).
	WebhookDeadAt time.Time
	Notices       []Notice
}

// WebhookDeadAt is when Discord answered 404 ("Unknown Webhook") for the
// configured webhook; zero while it works or when none is configured. One
// primary-key read: the landing page asks it on every load.
func (n *Notifier) WebhookDeadAt(ctx context.Context) (time.Time, error) {
	if !n.Enabled() {
		return time.Time{}, nil
	}
	at, err := n.store.WebhookDeadAt(ctx, n.hook.hash)
	if err != nil {
		return time.Time{}, fmt.Errorf("notify: webhook state: %w", err)
	}
	return at, nil
}

// Status reads the open notices, each with the age its condition has at now,
// in one round trip (QueueStatus).
func (n *Notifier) Status(ctx context.Context, now time.Time) (Status, error) {
	b := n.store.NewBatch()
	finish := n.QueueStatus(b, now)
	if err := n.store.Send(ctx, b); err != nil {
		return Status{}, fmt.Errorf("notify: status: %w", err)
	}
	_, st := finish()
	return st, nil
}

// QueueStatus queues Status's reads into b — the verdict's (the conditions'
// one statement, the webhook's state) and the open notices — so a page
// sends them with its own reads in one round trip. finish reads both once b
// is sent. A notice holds exactly when its condition is in the verdict:
// holding reads the very expressions derive runs one subject at a time.
func (n *Notifier) QueueStatus(b *store.Batch, now time.Time) (finish func() (Verdict, Status)) {
	verdict := n.QueueVerdict(b, now)
	var rows []store.NoticeState
	b.Notices(&rows)
	return func() (Verdict, Status) {
		v := verdict()
		out := Status{Enabled: n.Enabled(), WebhookDeadAt: v.WebhookDeadAt}
		held := map[subject]Condition{}
		for _, c := range v.Conditions {
			held[subject{c.Kind, c.Site}] = c
		}
		for _, r := range rows {
			nt := Notice{
				Kind:              r.Kind,
				Site:              r.Site,
				Attempts:          r.Attempts,
				LastError:         r.LastError,
				GaveUp:            r.GaveUp,
				MayNotHaveArrived: r.SentUnknown,
			}
			nt.SentAt, nt.LastAttemptAt, nt.RetryNotBefore = r.NotifiedAt, r.LastAttemptAt, r.RetryNotBefore
			if c, ok := held[subject{nt.Kind, nt.Site}]; ok {
				nt.Holds, nt.Since = true, c.Since
			}
			out.Notices = append(out.Notices, nt)
		}
		return v, out
	}
}
