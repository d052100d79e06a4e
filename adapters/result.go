package adapters

import (
	"time"

	"github.com/mangabookmark/mangabookmark/word"
)

// Result and CoverImage are what the fetch package hands its callers. They
// are plain values and live here, beside Facts, so that the poller and the
// handlers can name them without importing the I/O package and the browser
// driver it carries (see this package's doc, and fetch's).

// Result is what one Poll's read learned.
type Result struct {
	Outcome word.Outcome
	// Facts is meaningful when Outcome is OK, and on NoChapter (title, cover and
	// completion may be set).
	Facts Facts
	// Checked is true when the Site's own answer arrived: a response or rendered
	// page that is not a challenge (ok, no_chapter, not_found, and errors from a
	// response: 5xx, plain 403, oversize).
	Checked bool
	Status  int
	// RetryAfter is a 429's Retry-After, bounded to an hour; 0 when absent.
	RetryAfter time.Duration
	// Err says what went wrong, short and safe to log. nil on OK.
	Err error
}

// ListingResult is what one read of a listing page learned. Its fields mean
// what Result's do; a 200 that is not the listing (ErrNotListing) is
// no_chapter, a real listing page without rows ok with no entries.
type ListingResult struct {
	Outcome word.Outcome
	// Listing is meaningful when Outcome is OK.
	Listing    Listing
	Checked    bool
	Status     int
	RetryAfter time.Duration
	Err        error
}

// CoverImage is a fetched cover whose bytes sniffed as an image.
type CoverImage struct {
	Body        []byte
	ContentType string // from the bytes, never from the Site's header
}
