package components

// The Reader's pages' view models, shaped like the screen.

// BookmarksPage is My Bookmarks at /.
type BookmarksPage struct {
	NewOnly bool
	Search  string
	List    BookmarkList
	Add     AddBox
	// Removed is the Undo a plain-form remove answers with (htmx puts it in
	// the row's place instead).
	Removed *RemovedRow
	// OwnerRemoved names the Series the owner removed from the Reader's
	// Bookmarks since their last visit; each is said once.
	OwnerRemoved []string
}

// BookmarkList is the list region: what the filter form swaps.
type BookmarkList struct {
	Rows []MyBookmark
	// Total is how many Bookmarks the Reader has, whatever the filter shows.
	Total    int
	Filtered bool
	// More is how many of the Reader's Bookmarks were left undrawn: the
	// list after an import draws only its first rows.
	More int
}

// MyBookmark is one Bookmark.
type MyBookmark struct {
	Site, ID, Title string
	Cover           CoverView
	SeriesHref      string // the Series page on its Site ("" when it is not a web address)
	NextHref        string // the Site's page of my next chapter, else the Series page
	NextLabel       string
	Latest          string // "" when no chapter is known yet
	LatestSeen      string // "seen 3 h ago", "" when not known
	Progress        string // "" when none
	Ember           bool
	Message         string
	Fault           bool

	// Unconfirmed, in LatestSeen's place, names who raised Latest Chapter
	// while no read of the Site's page has shown it ("" when a Poll stands
	// behind it): "seen by Ada, not yet on the Site's page".
	Unconfirmed string

	// Health is the Series' state a Reader should know of, drawn as a
	// muted tag on the fact line (issue 24, item 5); the zero value for a
	// healthy Series.
	Health RowHealth
}

// RowHealth is one mark on a Reader's row: Word is "finished", "failing"
// or "site-completed" ("" for none), Text what the tag says and, for
// "failing", when the run of failures began: its day on the tag (Day,
// word.Day), the whole moment in Since.
type RowHealth struct {
	Word, Text string
	Day        string
	Since      Stamp
}

// RemovedRow stands where a removed Bookmark was, with its Undo.
type RemovedRow struct {
	Site, ID, Title, Progress, ProgressURL string
}

// AddBox is the add-by-address form and what its last use did.
type AddBox struct {
	Action  string // "/" for a Reader, "/admin/series" for the owner
	Text    string // what was typed, shown back when nothing was read
	Message string // a refusal of the whole paste
	Entries int    // an imported file's entries; 0 for a paste
	Results []AddResult
	Sites   []string
	// Tally counts a whole import's outcomes; Results then holds at most a
	// bounded number of its lines, and Unshown counts the others.
	Tally   []AddCount
	Unshown int
}

// AddCount is how many entries of an import had one outcome.
type AddCount struct {
	Word  string // as AddResult.Word
	Label string // what happened to them, e.g. "already bookmarked; nothing changed"
	N     int
	Fault bool
}

// AddResult is what one pasted line did.
type AddResult struct {
	N        int // the entry's place in an imported file; 0 for a paste
	Line     string
	Word     string // added, already, progress, unsupported, failed
	Sentence string
	Fault    bool
	Href     string // where the Series is shown (the owner's detail page), "" for none
}

// TokensPage is /tokens.
type TokensPage struct {
	Tokens  []TokenRow
	New     string // the token just created, shown once
	NewName string
	Message string
	Fault   bool
}

// TokenRow is one token as its Reader sees it (never its value).
type TokenRow struct {
	ID                      string
	Name, Created, LastUsed string
}

// ReadersPage is /admin/readers.
type ReadersPage struct {
	Readers []ReaderRow
	Link    string // a sign-in link just made
	LinkFor string
	LinkTTL string
	Message string
	Fault   bool
	// Remove is the removal's confirm step, shown in place of the list's
	// top; nil: no removal asked.
	Remove *RemoveConfirm
}

// RemoveConfirm is the second step of removing a Reader.
type RemoveConfirm struct {
	ID, Name  string // ID is path-escaped
	Bookmarks string // the sentence saying what becomes of their Bookmarks
}

// ReaderRow is one Reader on the owner's page.
type ReaderRow struct {
	ID, Name, LastSeen string
	Local              bool // signed in by the owner's link, not Discord
	Owner              bool // the owner: never offered Remove (the server refuses it)
}
