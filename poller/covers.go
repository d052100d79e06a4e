package poller

import (
	"context"
	"errors"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// CoverFetcher fetches a Series' cover through the fetch gate; the server's
// is the *fetch.Reader.
type CoverFetcher interface {
	FetchCover(ctx context.Context, site, coverURL string) (adapters.CoverImage, error)
}

// CoverRetry is how long a cover that could not be kept waits before it is
// tried again (its Series shows the drawn placeholder meanwhile).
const CoverRetry = 24 * time.Hour

// coversWelcome says whether a Lane may fetch covers while it rests after
// pass: only after a pass that ran and was not stopped by refusals. A Site
// that refuses us, a paused Lane and a database outage get no extra requests.
func coversWelcome(pass Pass) bool {
	return pass.Skip == word.SkipNone && !pass.Broken
}

// fetchCovers runs while a leading Lane rests: one cover after another,
// spaced like Polls, until none is due or ctx ends. The rest's end and a wake
// both end ctx, which cancels a fetch in flight, so the Lane's next Poll
// waits at most one spacing after the last cover request began.
func (p *Poller) fetchCovers(ctx context.Context, site string, l *lane) {
	if p.cfg.Covers == nil {
		return
	}
	for p.space(ctx, l) {
		due, err := p.st.NextCover(ctx, site, p.now())
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
				p.log().Warn("cover: next due not read", "site", site, "err", err)
			}
			return
		}
		l.requested()
		img, err := p.cfg.Covers.FetchCover(ctx, site, due.CoverURL)
		if ctx.Err() != nil {
			return // cut short by a wake or the rest's end: still due
		}
		if err != nil {
			// One line; the page draws the placeholder and never says so.
			p.log().Info("cover not kept", "site", site, "series_id", due.SeriesID, "err", err)
			err = p.st.CoverFailed(ctx, site, due.SeriesID, p.now().Add(CoverRetry))
		} else {
			err = p.st.SaveCover(ctx, site, due.SeriesID, due.CoverURL, img.ContentType, img.Body, p.now())
		}
		if err != nil {
			p.log().Warn("cover: result not stored", "site", site, "series_id", due.SeriesID, "err", err)
			return
		}
	}
}
