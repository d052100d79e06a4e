package store

// Statements the plan test EXPLAINs.
var (
	DueSeriesSQL    = dueSeriesSQL
	NextDueSQL      = nextDueSQL
	CountDueSQL     = countDueSQL
	MarkListedSQL   = markListedSQL
	PruneArrivals   = pruneArrivalsSQL
	PrunePassesSQL  = prunePassesSQL
	OldestCheckSQL  = nextCheckSQL
	StallRunSQL     = stallRunSQL
	RefusingRunSQL  = refusingRunSQL
	SidecarDownSQL  = sidecarDownRunSQL
	AdapterBroken   = adapterBrokenSQL
	RaiseLatestSQL  = sightSQL
	PollSeenSQL     = pollSeenSQL
	BookmarksSQL    = listBookmarksSQL
	DeleteOrphans   = deleteOrphansSQL
	NewestDueSQL    = newestDueSQL
	OldestChecksSQL = oldestChecksSQL
)
