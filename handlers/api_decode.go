package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/mangabookmark/mangabookmark/word"
)

// progressRequest is POST /api/v1/progress.
type progressRequest struct {
	URL       string          `json:"url"`
	Chapter   json.RawMessage `json:"chapter"`
	Bookmark  bool            `json:"bookmark"`
	Backwards bool            `json:"backwards"`
}

// sightingRequest is POST /api/v1/sightings.
type sightingRequest struct {
	URL      string            `json:"url"`
	Chapters []json.RawMessage `json:"chapters"`
}

// decodeStrict reads exactly one JSON object into v, refusing keys v does
// not have: a misspelt key must not be read as "absent".
func decodeStrict(body []byte, v any) *apiError {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, more := dec.Token(); more != io.EOF {
			return apiErr(http.StatusBadRequest, apiMalformedJSON, "The body holds more than one JSON value.")
		}
		return nil
	}
	// encoding/json has no typed error for an unknown key; its message is
	// `json: unknown field "name"`.
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		return apiErr(http.StatusBadRequest, apiUnknownField, "The body has a key this endpoint does not take: "+strings.TrimPrefix(msg, "json: unknown field ")+".")
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return apiErr(http.StatusBadRequest, apiMalformedJSON, "The key "+typeErr.Field+" has the wrong type.")
	}
	return apiErr(http.StatusBadRequest, apiMalformedJSON, "The body is not a JSON object.")
}

// parseChapterValue reads one chapter number sent as a JSON number (12.5)
// into the canonical decimal every chapter is kept in. A string ("12.5")
// is not one: the README says chapters are JSON numbers.
func parseChapterValue(raw json.RawMessage) (string, bool) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
		return "", false
	}
	return chapterText(s)
}

// chapterText is the one check of a chapter number a Reader gives us, the
// API's and every import format's: digits with an optional fraction, within
// word.ParseChapter's bounds. Negative numbers, exponents, more than four
// decimals or seven integer digits are not chapter numbers (not_a_chapter).
func chapterText(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "eE+-") {
		return "", false
	}
	c, ok := word.ParseChapter(s)
	return string(c), ok
}

// absent reports whether an optional JSON value was left out or null.
func absent(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// decodeProgress reads and checks a progress request; chapter is "" when
// none was sent (allowed only with bookmark: true).
func decodeProgress(body []byte) (req progressRequest, chapter string, e *apiError) {
	if e := decodeStrict(body, &req); e != nil {
		return req, "", e
	}
	if strings.TrimSpace(req.URL) == "" {
		return req, "", apiErr(http.StatusBadRequest, apiBadRequest, "The key url is missing: send the Series or chapter address.")
	}
	if absent(req.Chapter) {
		if !req.Bookmark {
			return req, "", apiErr(http.StatusBadRequest, apiBadRequest, "Send a chapter number, or \"bookmark\": true to bookmark the Series alone.")
		}
		return req, "", nil
	}
	num, ok := parseChapterValue(req.Chapter)
	if !ok {
		return req, "", notAChapter(req.Chapter)
	}
	return req, num, nil
}

// decodeSighting reads and checks a Sighting; chapters come back canonical.
func decodeSighting(body []byte) (req sightingRequest, chapters []string, e *apiError) {
	if e := decodeStrict(body, &req); e != nil {
		return req, nil, e
	}
	if strings.TrimSpace(req.URL) == "" {
		return req, nil, apiErr(http.StatusBadRequest, apiBadRequest, "The key url is missing: send the Series or chapter address.")
	}
	if len(req.Chapters) == 0 {
		return req, nil, apiErr(http.StatusBadRequest, apiBadRequest, "The key chapters is missing or empty.")
	}
	if len(req.Chapters) > maxSighting {
		return req, nil, apiErr(http.StatusBadRequest, apiTooManyChapters, "A Sighting carries at most 50 chapter numbers.")
	}
	for _, raw := range req.Chapters {
		num, ok := parseChapterValue(raw)
		if !ok {
			return req, nil, notAChapter(raw)
		}
		chapters = append(chapters, num)
	}
	return req, chapters, nil
}

func notAChapter(raw json.RawMessage) *apiError {
	shown := string(raw)
	if len(shown) > 40 {
		shown = shown[:40] + "…"
	}
	return apiErr(http.StatusBadRequest, apiNotAChapter, "Not a chapter number: "+shown+" (a JSON number such as 12 or 12.5, not negative, at most four decimals).")
}
