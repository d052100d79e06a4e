// Temporary: replaced by the poller branch at merge.

// The owner's controls whose writes belong to the poller branch. These are
// the admin branch's stand-ins, written to the same signatures so that the
// handlers compile and are tested; the poller's own versions replace this
// whole file when the branches merge.

package store

import "context"

// CorrectLatestChapter is the owner's hand correction of Latest Chapter. It
// sets the number and clears nothing: not the failure row, not
// latest_raised_by (SPEC.md glossary, "Correction").
func (s *Store) CorrectLatestChapter(ctx context.Context, site, id, num string) error {
	return s.execOne(ctx, "correct latest chapter "+site+"/"+id,
		`UPDATE series SET latest_chapter_num = $3::numeric WHERE site = $1 AND series_id = $2`, site, id, num)
}

// ClearAttribution forgets which Reader raised Latest Chapter.
func (s *Store) ClearAttribution(ctx context.Context, site, id string) error {
	return s.execOne(ctx, "clear attribution "+site+"/"+id,
		`UPDATE series SET latest_raised_by = NULL WHERE site = $1 AND series_id = $2`, site, id)
}

// ForceSeriesPoll asks for a Poll of one Series now. A request is not
// evidence: it clears nothing.
func (s *Store) ForceSeriesPoll(ctx context.Context, site, id string, now int64) error {
	return s.execOne(ctx, "force poll "+site+"/"+id,
		`UPDATE series SET force_poll_at = $3 WHERE site = $1 AND series_id = $2`, site, id, now)
}

// ForceLanePoll asks a whole Lane for a pass now.
func (s *Store) ForceLanePoll(ctx context.Context, site string, now int64) error {
	return s.execOne(ctx, "force lane "+site,
		`UPDATE poll_lanes SET force_poll_at = $2 WHERE site = $1`, site, now)
}

// PauseLane stops a Lane until a time (the owner's own act, never a fault).
func (s *Store) PauseLane(ctx context.Context, site string, until int64) error {
	return s.execOne(ctx, "pause lane "+site,
		`UPDATE poll_lanes SET paused_until = $2 WHERE site = $1`, site, until)
}

// ResumeLane ends a Pause.
func (s *Store) ResumeLane(ctx context.Context, site string) error {
	return s.execOne(ctx, "resume lane "+site,
		`UPDATE poll_lanes SET paused_until = 0 WHERE site = $1`, site)
}
