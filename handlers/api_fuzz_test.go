package handlers

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mangabookmark/mangabookmark/word"
)

// FuzzAPIDecode feeds arbitrary bodies to both write decoders: they never
// panic, every refusal is a 400 with a known word, and every accepted
// chapter is canonical (reading it again gives itself).
func FuzzAPIDecode(f *testing.F) {
	for _, s := range []string{
		`{"url":"https://asurascans.com/comics/x","chapter":12.5,"bookmark":true}`,
		`{"url":"u","chapter":"0012.50"}`,
		`{"url":"u","chapter":-1}`,
		`{"url":"u","chapter":1e400}`,
		`{"url":"u","chapters":[1,2,"3.25",null]}`,
		`{"url":"u","chapters":[1],"x":1}`,
		`{"url":"u"} {"url":"v"}`,
		`[`, `null`, `"string"`, `{"chapter":{"a":1}}`, "{\"url\":\"\xff\",\"chapter\":1}",
	} {
		f.Add([]byte(s))
	}
	words := map[apiWord]bool{apiMalformedJSON: true, apiUnknownField: true, apiNotAChapter: true, apiBadRequest: true, apiTooManyChapters: true}
	check := func(t *testing.T, e *apiError, chapters ...string) {
		if e != nil {
			if e.status != http.StatusBadRequest || !words[e.word] || e.message == "" || !json.Valid(e.body()) {
				t.Fatalf("refusal %+v", e)
			}
			return
		}
		for _, c := range chapters {
			if again, ok := word.ParseChapter(c); c != "" && (!ok || string(again) != c) {
				t.Fatalf("accepted %q, not canonical", c)
			}
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, num, e := decodeProgress(body)
		check(t, e, num)
		_, nums, e := decodeSighting(body)
		check(t, e, nums...)
		if e == nil && (len(nums) == 0 || len(nums) > maxSighting) {
			t.Fatalf("accepted %d chapters", len(nums))
		}
	})
}
