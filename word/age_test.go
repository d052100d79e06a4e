package word_test

import (
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/word"
)

func TestAnAgeReadsTheSameWayAtAnyLength(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "1 second"},
		{1500 * time.Millisecond, "1 second"},
		{10 * time.Second, "10 seconds"},
		{59 * time.Second, "59 seconds"},
		{time.Minute, "1 minute"},
		{90 * time.Second, "1 minute"},
		{5 * time.Minute, "5 minutes"},
		{time.Hour, "1 hour"},
		{13 * time.Hour, "13 hours"},
		{47 * time.Hour, "47 hours"},
		{3 * 24 * time.Hour, "3 days"},
		{59 * 24 * time.Hour, "59 days"},
		{92 * 24 * time.Hour, "3 months"},
		{800 * 24 * time.Hour, "2 years"},
	}
	for _, c := range cases {
		if got := word.Age(c.d); got != c.want {
			t.Errorf("Age(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestAMomentSecondsAgoIsJustNowThenSeconds(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{-3 * time.Second, "just now"},
		{0, "just now"},
		{9 * time.Second, "just now"},
		{10 * time.Second, "10 seconds ago"},
		{42 * time.Second, "42 seconds ago"},
		{90 * time.Second, "1 minute ago"},
		{26 * time.Hour, "26 hours ago"},
	}
	for _, c := range cases {
		if got := word.Ago(c.d); got != c.want {
			t.Errorf("Ago(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}
