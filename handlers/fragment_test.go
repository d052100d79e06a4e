package handlers

import (
	"net/http"
	"testing"
)

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
