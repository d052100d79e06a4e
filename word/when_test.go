package word_test

import (
	"testing"
	"time"

	_ "time/tzdata" // as the binary embeds it

	"github.com/mangabookmark/mangabookmark/word"
)

func TestAMomentIsWrittenInTheOwnersZone(t *testing.T) {
	at := time.Date(2026, 12, 3, 5, 44, 21, 0, time.UTC)
	berlin, err := word.ParseZone("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		zone *time.Location
		want string
	}{{time.UTC, "3 Dec 05:44 UTC"}, {berlin, "3 Dec 06:44 CET"}, {nil, "3 Dec 05:44 UTC"}} {
		if got := word.When(at, c.zone); got != c.want {
			t.Errorf("When in %v = %q, want %q", c.zone, got, c.want)
		}
	}
	if got := word.MachineTime(at.In(berlin)); got != "2026-12-03T05:44:21Z" {
		t.Errorf("machine time %q", got)
	}
	if z, err := word.ParseZone(""); err != nil || z != time.Local {
		t.Errorf("an unset zone is %v (%v), want the server's own", z, err)
	}
	if _, err := word.ParseZone("Mars/Olympus"); err == nil {
		t.Error("an unknown zone was taken")
	}
}
