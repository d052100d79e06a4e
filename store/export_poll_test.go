package store

// Statements the plan test EXPLAINs.
var (
	DueSeriesSQL   = dueSeriesSQL
	PrunePassesSQL = prunePassesSQL
	OldestCheckSQL = nextCheckSQL
	StallRunSQL    = stallRunSQL
	RefusingRunSQL = refusingRunSQL
	SidecarDownSQL = sidecarDownRunSQL
	AdapterBroken  = adapterBrokenSQL
)
