package components

import (
	"strconv"
	"time"

	"github.com/mangabookmark/mangabookmark/word"
)

// The admin view models: shaped like the screen, filled by the handlers,
// every age already a string (word.Age: "3 hours", "2 months") so a
// component decides nothing.

// FailureMarker is the fact line's failure marker: the outcome word and how
// long the run of failures has lasted. One look at every age.
type FailureMarker struct {
	Outcome word.Outcome
	Age     string
}

// Fact is the one-line summary of a Series (CONTEXT.md, Fact line).
type Fact struct {
	Site     string
	Kind     string
	Latest   string // "" when no chapter was ever known
	RaisedBy string // the Reader whose Sighting raised Latest Chapter; "" = a Poll or the owner
	Checked  string // "checked 5 minutes ago", "never reached: last tried …" or "never checked"
	Failure  *FailureMarker
	Finished string // "" or when it was Finished ("just now", "2 days ago")
}

// SeriesRow is one row of the list.
type SeriesRow struct {
	Site, ID, Title, Cover, Href string
	Fact                         Fact
}

// Option is one choice of a select or a radio group.
type Option struct {
	Value, Label string
}

// SeriesList is the swapped list region.
type SeriesList struct {
	Caption   string // e.g. "failing · asurascans"
	Meaning   string // the filter's one meaning sentence
	Count     int64  // the filter's figure, with site and kind stacked
	Capped    bool   // more than Count rows: Count is the cap, printed "1000+"
	Rows      []SeriesRow
	NextHref  string // "" on the last page
	PrevHref  string // "" on the first page
	FirstHref string // "" on the first page
	Back      string // this page's own address, where a bulk action returns
}

// BulkPick is one selected Series in Finish's confirm step.
type BulkPick struct {
	Key, Title, Hint string // Key is "site:id"
}

// BulkStep is the bulk action's region above the list.
type BulkStep struct {
	Confirm bool // the confirm step for Picks: Finish's, or Delete's when Delete
	Delete  bool
	Picks   []BulkPick
	Back    string // the list page to return to
	Message string
	Fault   bool
}

// FilterMeaning is one filter's label and meaning sentence, for the list
// page's glossary.
type FilterMeaning struct {
	Value, Label, Meaning string
}

// SeriesListPage is the whole list page.
type SeriesListPage struct {
	Filter, Site, Kind string
	Q, Sort            string
	Sorts              []Option
	Bulk               BulkStep
	Filters            []Option
	Meanings           []FilterMeaning
	Sites              []Option
	Kinds              []Option
	List               SeriesList
	// Add is the owner's add-by-address box: Series without a Bookmark.
	Add AddBox
}

// Stat is one figure of the landing stats block.
type Stat struct {
	Filter  string // "" for every Series (testid stat-all)
	Label   string
	Meaning string // the one meaning sentence: the figure's accessible description
	N       int64
	Capped  bool // more than N rows: N is the cap
	Fault   bool // a non-zero figure that needs the owner (fault colour)
	Href    string
}

// VerdictItem is one condition as the verdict line names it.
type VerdictItem struct {
	Kind            word.NoticeKind
	Site, Age, Href string
	Fix             string // Kind.Repair(Site): the same repair the embed names
}

// SetupStep is one thing a server is not set up for: what is missing and
// the step that fixes it.
type SetupStep struct {
	Step    string // "webhook", "webhook-dead" or "sidecar": the item's data-step and test id
	Missing string // a whole sentence
	Fix     string // a clause, as VerdictItem.Fix
}

// Early is the verdict's "too early to tell": faults that began less than
// ownerWindow ago, each with its count (CONTEXT.md, Verdict line).
type Early struct {
	Total string   // how many in all ("5", or "1001+" past a figure's cap)
	Items []string // "4 Series failing", "asurascans stalling for 2 hours"
}

// Verdict is the landing verdict: not set up, needs you, too early to tell,
// each shown when it holds, in that order; Healthy when none does.
type Verdict struct {
	Setup []SetupStep
	Items []VerdictItem
	// LaneFaults are the Lane faults that are no owner notice (ADR 0016):
	// a listing failing or Broken, or a Lane reaching nothing, past
	// ownerWindow; said under "Needs you" after the conditions.
	LaneFaults []LaneFault
	Early      *Early // nil: no fault is younger than ownerWindow
	Broken     bool   // the conditions could not be read
}

// LaneFault is one of them: its clause, naming the Lane and its age, and
// its repair; Href opens the Lane's row.
type LaneFault struct {
	Site, Text, Fix, Href string
}

// Healthy is true when the verdict has nothing to say but that.
func (v Verdict) Healthy() bool {
	return !v.Broken && len(v.Setup) == 0 && len(v.Items) == 0 && len(v.LaneFaults) == 0 && v.Early == nil
}

// Landing is the /admin page.
type Landing struct {
	Verdict Verdict
	Stats   []Stat
	// Demo is true while `mangabookmark demo` runs: the page links to the
	// notices its webhook sink received.
	Demo      bool
	Empty     bool // no Series at all yet: say how the first one arrives
	Freshness LandingFreshness
	Failing   FailingLine // the week of the failing figure (issue 23, item 11)
}

// BookmarkRow is one Reader's Bookmark on the detail page.
type BookmarkRow struct {
	Reader, Progress, Updated string
}

// SeriesDetail is the detail page's swapped region.
type SeriesDetail struct {
	Site, ID, Title, Cover, Address, Base string
	AddressHref                           string // Address when it may be a link (http or https); "" shows it as text

	Fact         Fact
	Latest       string
	Raised       bool
	Unverified   bool
	Finished     bool
	Hint         string // completion hint sentence; "" when none or Finished
	ForcePending string // when a Forced Poll not yet served was asked ("just now", "3 hours ago"); ""
	ForceWaits   string // why it waits, from its Lane's state ("waiting: …"); "" while the next pass serves it
	Live         string // while ForcePending: the address the Poll section asks again
	PollServed   string // the requested Poll was served: what it found
	Bookmarks    []BookmarkRow
	Orphan       bool
	Outcome      *OutcomeNote // what the last Poll's outcome means; nil before any Poll
	TestRead     *TestRead    // the answer of a Test read just run; nil otherwise
	CanTestRead  bool         // the server can run a Test read

	ConfirmFinish bool   // the Finish control is at its second step
	ConfirmDelete bool   // the Delete control is at its second step (a bookmarked Series)
	Message       string // what the last control did or why it refused
	Fault         bool   // Message is a refusal
	Correction    string // the owner's rejected input, shown back to them
}

// OutcomeNote explains a Series' last outcome: the machine word (a data
// attribute), its plain words (shown once), what it means and what the owner
// can do.
type OutcomeNote struct {
	Word, Plain, Meaning, Action string
	Age                          string // how long the run of failures has lasted; "" for a healthy read
	Fault                        bool
}

// TestRead is what one Test read saw: the outcome, the HTTP status or the
// error class, and the facts the adapter read.
type TestRead struct {
	Word, Plain string
	Meaning     string
	Fault       bool
	Status      string // "HTTP 200", or "no HTTP answer"
	Error       string // the error, free of any secret; ""
	Facts       []Option
}

// LaneCount is one outcome word's count over ownerWindow (never a link):
// the plain words, the machine word only as the row's data-outcome.
type LaneCount struct {
	Word  word.Outcome
	Plain string
	N     int
}

// Stamp is a moment as the page prints it (components.Time): the owner's
// zone in the text, the instant in the <time> element's datetime.
type Stamp struct {
	ISO  string // RFC 3339 in UTC, for datetime
	Text string // word.When: in the owner's time zone (TIME_ZONE)
	In   string // how far off, for a moment ahead; "" where unused
}

// LaneRow is one Site on the Lanes page.
type LaneRow struct {
	Site          string
	Base          string // the Lane's control address, /admin/lanes/{site}
	Route         word.Route
	State         string
	StateUntil    *Stamp // the end of a Pause or a Refusal; nil
	StateNote     string // what the state means, for a fault or a Pause
	StateFault    bool
	Problem       bool     // a fault state or a holding condition: listed first
	Fixes         []string // notify.Fix of each condition holding on this Lane
	LastPass      string
	Never         bool // the Lane has never run a pass
	Counts        []LaneCount
	Passes        int64
	FailingHref   string
	NoChapterHref string // the adapter-broken list, while the condition holds
	Paused        bool
	ForcePending  string // when a Forced Poll not yet served was asked ("just now", "3 hours ago"); ""
	ForceWaits    string // why it waits, from the Lane's state ("waiting: …"); "" while the next pass serves it
	Live          string // while a Forced Poll or a Pause waits: the row's own address, asked again
	Served        bool   // Message says a waiting request was served (announced, never focused)
	Message       string
	Fault         bool
	Listing       string // the listing's last attempt and its age, or off, or not read yet
	ListingCost   string // while the listing finds nothing: what that costs in reads; ""
	ListingBroken string // a Lane fault of the listing or the reach (past ownerWindow): the sentence with its fix; ""
	Freshness     Freshness
	Strip         PassStrip // the last day of passes (issue 23, item 11)
}

// FreshnessHour is one hour of a Lane's plot: the new chapters confirmed
// in it and their detection delays; Label says it in words ("" when N is 0).
type FreshnessHour struct {
	N           int64
	Median, P95 time.Duration
	Label       string
}

// Freshness is a Lane's freshness block: the summary line and the plot of
// the last 24 hours, oldest hour first; Desc is the plot's accessible
// description (every number it draws).
type Freshness struct {
	Summary string
	Empty   bool // no new chapter in the window: the line alone, no plot
	Hours   []FreshnessHour
	Desc    string
}

// LandingFreshness is the landing's one figure: N new chapters detected in
// the last 24 hours and their median delay (Text follows the figure).
type LandingFreshness struct {
	N      int64
	Figure string
	Text   string
	// Fallback says when the number comes from fallback reads: a listing
	// off, failing or Broken; "" while every listing is read.
	Fallback string
	Broken   bool // it could not be read just now
}

// Polled reports whether any outcome was counted in the window.
func (l LaneRow) Polled() bool {
	for _, c := range l.Counts {
		if c.N > 0 {
			return true
		}
	}
	return false
}

// Notice is one open owner notice: what holds, since when, and whether the
// owner was told (or why not yet).
type Notice struct {
	Kind, Subject, Since, Sent string
	Fix                        string // notify.Fix: the same sentence as the embed
	Pending                    bool
	// MayNotHaveArrived: sent, and no answer came; it is not sent again.
	MayNotHaveArrived bool
}

// LanesPage is /admin/lanes.
type LanesPage struct {
	Window      string
	NoticesOff  bool   // DISCORD_WEBHOOK_URL unset
	WebhookDead string // age of Discord's 404 for the webhook
	Lanes       []LaneRow
	Notices     []Notice
	Pauses      []Option
	// Announcements is the Reader announcements' delivery line.
	Announcements AnnouncementsView
}

// AnnouncementsView is the Reader announcements' delivery in the last day:
// "discord 12 sent · 1 failed" per channel.
type AnnouncementsView struct {
	Counts string
	// MayNotHaveArrived counts, per channel, the announcements sent with no
	// answer ("discord 2"); "" when none. They are not sent again.
	MayNotHaveArrived string
	// DiscordOff: READERS_WEBHOOK_URL is unset. DiscordDead is the age of
	// the webhook's 404 ("" while alive): the channel is off until it changes.
	DiscordOff  bool
	DiscordDead string
}

// ReadersTrack says how many Readers bookmark a Series.
func ReadersTrack(n int) string {
	if n == 1 {
		return "1 Reader tracks it"
	}
	return strconv.Itoa(n) + " Readers track it"
}

// bulkAction is the action a bulk confirm step posts again.
func bulkAction(b BulkStep) string {
	if b.Delete {
		return "delete"
	}
	return "finish"
}
