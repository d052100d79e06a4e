package store

// The Reader announcements' statements, for their plan test.
var AnnounceStatements = map[string]string{
	"record":  recordAnnouncementsSQL,
	"unsent":  unsentSQL,
	"claim":   claimAnnouncementsSQL,
	"sent":    recordAnnouncementsSentSQL,
	"failed":  recordAnnouncementsFailedSQL,
	"unknown": recordAnnouncementsUnknownSQL,
	"settle":  settleAnnouncementsSQL,
	"moot":    dropMootSQL,
	"counts":  deliveryCountsSQL,
	"failing": failingChannelsSQL,
}
