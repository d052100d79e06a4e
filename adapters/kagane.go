package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/mangabookmark/mangabookmark/word"
)

// Kagane's Series page is a shell; one API call returns the details and the whole
// chapter list.
const (
	kaganeHost      = "kagane.to"
	kaganeAPIPath   = "/api/v2/series/"
	kaganeImagePath = "/api/v2/image/"
	kaganeDone      = "completed" // CONTEXT.md, Rules: Completion hint value: publication status only; upload status is ignored
)

// kaganeDetails holds the keys of the API body the Poll reads.
type kaganeDetails struct {
	Title             *flexString `json:"title"`
	PublicationStatus flexString  `json:"publication_status"`
	// UploadStatus is decoded only so the code says plainly that it is ignored:
	// it is the state of the scans on Kagane, and it diverges from the work's.
	UploadStatus flexString `json:"upload_status"`
	Covers       []struct {
		ImageID flexString `json:"image_id"`
	} `json:"series_covers"`
	Books []kaganeBook `json:"series_books"`
}

type kaganeBook struct {
	BookID    flexString `json:"book_id"`
	SeriesID  flexString `json:"series_id"`
	Title     flexString `json:"title"`
	ChapterNo flexString `json:"chapter_no"`
	SortNo    flexString `json:"sort_no"`
}

// flexString takes a JSON string or number (or null) as its literal text, so a key
// that changes type does not make the whole body unreadable.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*f = flexString(s)
		return nil
	}
	var n json.Number
	if json.Unmarshal(b, &n) == nil {
		*f = flexString(n.String())
		return nil
	}
	*f = ""
	return nil
}

var kaganeUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// kaganeMeta strips trailing "{...}" metadata from a book title.
var kaganeMeta = regexp.MustCompile(`(?:\s*\{[^{}]*\})+\s*$`)

type kagane struct{}

func (kagane) Site() string            { return "kagane" }
func (kagane) Domains() []string       { return []string{kaganeHost} }
func (kagane) legacyDomains() []string { return []string{"kagane.org"} }

// Recognise accepts /series/<uuid> and the reader pages /series/<uuid>/reader/<book>,
// on kagane.to and the old kagane.org.
func (a kagane) Recognise(u *url.URL) (Ref, bool) {
	if !recogniseCommon(a, u) {
		return Ref{}, false
	}
	seg := pathSegments(u)
	switch {
	case len(seg) == 2 && seg[0] == "series":
	case len(seg) == 4 && seg[0] == "series" && seg[2] == "reader":
	default:
		return Ref{}, false
	}
	id := strings.ToLower(seg[1])
	if !kaganeUUID.MatchString(id) {
		return Ref{}, false
	}
	return Ref{Site: a.Site(), SeriesID: id, URL: "https://" + kaganeHost + "/series/" + id}, true
}

// refFromBody names the Series an API body belongs to (the parse tool's
// fallback when no --url is given): its own series_id, else the series_id
// its books carry (the field the public scrapers document).
func (a kagane) refFromBody(body []byte) (Ref, bool) {
	var d struct {
		SeriesID flexString `json:"series_id"`
		Books    []struct {
			SeriesID flexString `json:"series_id"`
		} `json:"series_books"`
	}
	if json.Unmarshal(body, &d) != nil {
		return Ref{}, false
	}
	ids := []flexString{d.SeriesID}
	for _, b := range d.Books {
		ids = append(ids, b.SeriesID)
	}
	for _, id := range ids {
		if ref, ok := a.Recognise(&url.URL{Scheme: "https", Host: kaganeHost, Path: "/series/" + string(id)}); ok {
			return ref, true
		}
	}
	return Ref{}, false
}

// Target is the API body: the page itself carries nothing the Poll can read.
func (kagane) Target(ref Ref) Target {
	return Target{URL: "https://" + kaganeHost + kaganeAPIPath + ref.SeriesID, API: true}
}

func (a kagane) Parse(body []byte, ref Ref) (Facts, error) {
	var d kaganeDetails
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&d); err != nil {
		return Facts{}, fmt.Errorf("kagane: body is not the series JSON (%v): %w", shortErr(err), ErrNotSeries)
	}
	if d.Title == nil && d.Books == nil {
		return Facts{}, fmt.Errorf("kagane: JSON has neither title nor series_books: %w", ErrNotSeries)
	}
	f := Facts{Kind: word.Kagane.Kind()}
	if d.Title != nil {
		f.Title = cleanRawTitle(string(*d.Title))
	}
	f.Completed = strings.EqualFold(strings.TrimSpace(string(d.PublicationStatus)), kaganeDone)
	site := &url.URL{Scheme: "https", Host: kaganeHost, Path: "/"}
	if len(d.Covers) > 0 && kaganeID(string(d.Covers[0].ImageID)) {
		f.CoverURL = cleanURL(site, kaganeImagePath+string(d.Covers[0].ImageID))
	}
	l := latest{site: a}
	for _, b := range d.Books {
		// A book that names another Series by its id is not this one's.
		if other := strings.ToLower(string(b.SeriesID)); ref.SeriesID != "" && kaganeUUID.MatchString(other) && other != ref.SeriesID {
			continue
		}
		num := kaganeNumber(b)
		u := ""
		if ref.SeriesID != "" && kaganeID(string(b.BookID)) {
			u = cleanURL(site, "/series/"+ref.SeriesID+"/reader/"+string(b.BookID))
		}
		l.offer(num, u)
	}
	l.into(&f)
	return f, nil
}

// kaganeNumber prefers chapter_no, then a chapter number in the title, then
// sort_no (which on some sources is only an ordinal, hence last).
func kaganeNumber(b kaganeBook) string {
	if n, ok := ParseChapterNumber(string(b.ChapterNo)); ok {
		return n
	}
	if n, ok := ParseChapterNumber(kaganeMeta.ReplaceAllString(string(b.Title), "")); ok {
		return n
	}
	if b.SortNo != "" {
		if n, ok := canonicalFloat(string(b.SortNo)); ok {
			return n
		}
	}
	return ""
}

// kaganeID accepts the ids Kagane puts in paths (UUIDs, plain tokens) and nothing
// that could change the path.
func kaganeID(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// shortErr keeps a decoder error short enough for a log line.
func shortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}
