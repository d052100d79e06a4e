package word

// Skip is what a pass that returned early writes in poll_passes.skip: one
// value per early-return path (CONTEXT.md, Skip value). A pass that polled,
// even one broken by refusals or one with nothing due, writes SkipNone.
type Skip string

// The Skip values.
const (
	SkipNone Skip = ""
	// SkipNotLeader: another process holds this Lane's lease (replicas;
	// ADR 0018). The Lane loop waits for the lease instead of passing, so
	// in steady state only a direct pass call writes it.
	SkipNotLeader Skip = "not-leader"
	// SkipLockError: the Lane lease could not be asked for (no connection).
	SkipLockError Skip = "lock-error"
	// SkipNoLane: the Site has no poll_lanes row (not one of the six).
	SkipNoLane Skip = "no-lane"
	// SkipDBError: the Lane row could not be read (the database is unwell).
	SkipDBError Skip = "db-error"
	// SkipPaused: the owner paused the Lane (paused_until in the future).
	SkipPaused Skip = "paused"
	// SkipRefusing: the Site refused twice in a recent pass (refuse_until).
	SkipRefusing Skip = "refusing"
	// SkipNoBrowser: a browser Site and no sidecar configured.
	SkipNoBrowser Skip = "no-browser"
	// SkipBrowserDown: a browser Lane of this process lost the sidecar a
	// moment ago (the poller's BrowserDownFor).
	SkipBrowserDown Skip = "browser-down"
	// SkipDueError: the due query failed.
	SkipDueError Skip = "due-error"
	// SkipStopped: the context was already cancelled (shutdown) when the
	// pass began; nothing was read.
	SkipStopped Skip = "stopped"
)

// Skips lists every Skip value, SkipNone first.
var Skips = []Skip{SkipNone, SkipNotLeader, SkipLockError, SkipNoLane, SkipDBError, SkipPaused,
	SkipRefusing, SkipNoBrowser, SkipBrowserDown, SkipDueError, SkipStopped}

// SQL is s as an SQL string literal, for predicates over the pass log.
func (s Skip) SQL() string { return sqlText(string(s)) }
