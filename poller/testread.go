package poller

import (
	"context"
	"fmt"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/word"
)

// TestRead reads one Series now, the way a Poll would — the Reader's fetch
// gate and route, and the Lane's spacing — and writes nothing: no stamp, no
// failure row, no pass row. The owner's detail page uses it to see what the
// adapter sees without a shell (what `mangabookmark fetch` prints).
func (p *Poller) TestRead(ctx context.Context, site, seriesURL string) adapters.Result {
	if !word.KnownSite(site) {
		return adapters.Result{Outcome: word.Unfetchable, Err: fmt.Errorf("unknown site %q", site)}
	}
	l := p.lane(site)
	if err := p.reserve(ctx, l); err != nil {
		return adapters.Result{Outcome: word.Errors, Err: fmt.Errorf("waiting for the Lane's turn: %w", err)}
	}
	rctx, cancel := context.WithTimeout(ctx, p.cfg.ReadTimeout)
	defer cancel()
	res := p.reader.Read(rctx, site, seriesURL)
	l.requested()
	return res
}

// reserve takes the Lane's next turn for a request and waits for it: Spacing
// after the last request, and the turn is booked before the wait, so a pass
// that starts meanwhile waits after it (space reads the booking).
func (p *Poller) reserve(ctx context.Context, l *lane) error {
	l.readMu.Lock()
	at := time.Now()
	if next := l.lastRead.Add(p.cfg.Spacing); p.cfg.Spacing > 0 && next.After(at) {
		at = next
	}
	l.lastRead = at
	l.readMu.Unlock()
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
