package repeat_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/internal/repeat"
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }
func lines(b *bytes.Buffer) []string { return strings.Split(strings.TrimSpace(b.String()), "\n") }

func captured() (*bytes.Buffer, *slog.Logger) {
	var b bytes.Buffer
	return &b, slog.New(slog.NewJSONHandler(&b, nil))
}

func TestARepeatedFailureLogsOnceThenOnceAMinuteWithItsCountThenItsRecovery(t *testing.T) {
	t.Parallel()
	buf, log := captured()
	c := &clock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	r := repeat.New(log, c.now)
	// A 40 s database stop: a Lane asks 20 times a second.
	for range 800 {
		r.Fail(slog.LevelWarn, "comix", "lane lease not taken", "site", "comix", "err", "connection refused")
		c.add(50 * time.Millisecond)
	}
	if got := lines(buf); len(got) != 1 || !strings.Contains(got[0], `"msg":"lane lease not taken"`) || strings.Contains(got[0], "repeated") {
		t.Fatalf("800 failures in 40 s wrote %d lines, want 1:\n%s", len(got), buf)
	}
	// Another subject's run is its own.
	r.Fail(slog.LevelWarn, "kagane", "lane lease not taken", "site", "kagane")
	if n := len(lines(buf)); n != 2 {
		t.Fatalf("another Lane's first failure: %d lines, want 2", n)
	}
	for range 500 { // 25 s more: past a minute since the first line
		r.Fail(slog.LevelWarn, "comix", "lane lease not taken", "site", "comix", "err", "connection refused")
		c.add(50 * time.Millisecond)
	}
	got := lines(buf)
	if len(got) != 3 {
		t.Fatalf("after a minute: %d lines, want 3:\n%s", len(got), buf)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(got[2]), &m); err != nil {
		t.Fatal(err)
	}
	if m["msg"] != "lane lease not taken" || m["site"] != "comix" {
		t.Fatalf("the minute's line: %v", m)
	}
	// Failures 2 to 1201 (the one at 60 s) came after the first line.
	if m["repeated"] != float64(1200) || m["since"] != "2026-12-01T00:00:00Z" || m["level"] != "WARN" {
		t.Fatalf("the minute's line counts %v since %v at %v; want 1200 since the first", m["repeated"], m["since"], m["level"])
	}
	r.Clear("comix", "lane lease not taken", "site", "comix")
	r.Clear("comix", "lane lease not taken", "site", "comix") // no run: no line
	got = lines(buf)
	if len(got) != 4 {
		t.Fatalf("the recovery: %d lines, want 4:\n%s", len(got), buf)
	}
	m = nil
	_ = json.Unmarshal([]byte(got[3]), &m)
	if m["msg"] != "lane lease not taken: recovered" || m["failures"] != float64(1300) || m["lasted"] != "1m5s" || m["level"] != "INFO" {
		t.Fatalf("the recovery line: %v", m)
	}
	// The next failure starts a new run, logged at once.
	r.Fail(slog.LevelWarn, "comix", "lane lease not taken", "site", "comix")
	if n := len(lines(buf)); n != 5 {
		t.Fatalf("a new run after the recovery: %d lines, want 5", n)
	}
}
