package handlers

import (
	"net/http"
	"testing"
	"time"
)

func TestAnAgeReadsTheSameWayAtAnyLength(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{10 * time.Second, "1 min"},
		{5 * time.Minute, "5 min"},
		{time.Hour, "1 h"},
		{13 * time.Hour, "13 h"},
		{47 * time.Hour, "47 h"},
		{3 * 24 * time.Hour, "3 d"},
		{59 * 24 * time.Hour, "59 d"},
		{92 * 24 * time.Hour, "3 mo"},
		{800 * 24 * time.Hour, "2 y"},
	}
	for _, c := range cases {
		if got := ago(c.d); got != c.want {
			t.Errorf("ago(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestFragmentsAreForPlainHTMXRequestsOnly(t *testing.T) {
	cases := []struct {
		headers map[string]string
		want    bool
	}{
		{map[string]string{}, false},
		{map[string]string{"HX-Request": "true"}, true},
		{map[string]string{"HX-Request": "true", "HX-Boosted": "true"}, false},
		{map[string]string{"HX-Request": "true", "HX-History-Restore-Request": "true"}, false},
	}
	for _, c := range cases {
		r, _ := newRequest(c.headers)
		if got := wantsFragment(r); got != c.want {
			t.Errorf("%v: %v, want %v", c.headers, got, c.want)
		}
	}
}

func newRequest(h map[string]string) (*http.Request, error) {
	r, err := http.NewRequest(http.MethodGet, "/admin/series", nil)
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return r, err
}
