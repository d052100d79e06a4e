package store

// Statements the plan test EXPLAINs.
var (
	DueSeriesSQL   = dueSeriesSQL
	PrunePassesSQL = prunePassesSQL
	OldestCheckSQL = nextCheckSQL
)
