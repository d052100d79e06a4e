package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/word"
)

// fetchStandIn is a loopback novelfull: one readable Series, one that moved
// off the Site (a redirect the fetch gate refuses), and 404 for the rest.
func fetchStandIn(t *testing.T) *httptest.Server {
	t.Helper()
	page, err := os.ReadFile(fixture("novelfull", "completed.html"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/battle-through-the-heavens.html":
			w.Write(page)
		case "/moved-away.html":
			http.Redirect(w, r, "https://novelfull.evil.test/moved-away.html", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestFetchHelperProcess is not a test: TestFetchExitStatus runs the test
// binary again with MANGABOOKMARK_FETCH_URL set, and this runs the real main.
func TestFetchHelperProcess(t *testing.T) {
	u := os.Getenv("MANGABOOKMARK_FETCH_URL")
	if u == "" {
		return
	}
	os.Args = []string{"mangabookmark", "fetch", u}
	main()
	os.Exit(0)
}

// The exit status of `mangabookmark fetch URL` is what a script reads: 0 only
// for ok, 3 for any other outcome (the outcome and facts still printed), 1 for
// bad input.
func TestFetchExitStatus(t *testing.T) {
	srv := fetchStandIn(t)
	for _, tc := range []struct {
		name, url, outcome string
		status             int
	}{
		{"a readable Series", "https://novelfull.com/battle-through-the-heavens.html", "ok", 0},
		{"a missing page", "https://novelfull.com/gone-novel.html", "not_found", exitNotOK},
		{"a redirect off the Site", "https://novelfull.com/moved-away.html", "unfetchable", exitNotOK},
		{"an address of no Site", "https://example.com/x", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestFetchHelperProcess$")
			cmd.Env = append(os.Environ(), "MANGABOOKMARK_FETCH_URL="+tc.url, "SITE_BASE_URLS=novelfull="+srv.URL, "BROWSER_SITES=none")
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			err := cmd.Run()
			status := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				status = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != tc.status {
				t.Fatalf("exit status %d, want %d\nstdout %s\nstderr %s", status, tc.status, out.String(), errOut.String())
			}
			word, facts, _ := strings.Cut(out.String(), "\n")
			if word != tc.outcome {
				t.Errorf("outcome line %q, want %q", word, tc.outcome)
			}
			if tc.outcome != "" {
				decodeFacts(t, []byte(facts))
			}
		})
	}
}

func TestRunFetch(t *testing.T) {
	srv := fetchStandIn(t)
	env := func(k string) string {
		if k == "SITE_BASE_URLS" {
			return "novelfull=" + srv.URL
		}
		return ""
	}

	t.Run("a readable Series prints ok and its facts", func(t *testing.T) {
		var out, errOut bytes.Buffer
		err := runFetch(context.Background(), []string{"https://novelfull.com/battle-through-the-heavens.html"}, nil, &out, &errOut, env)
		if err != nil {
			t.Fatalf("runFetch: %v", err)
		}
		word, rest, _ := bytes.Cut(out.Bytes(), []byte("\n"))
		if string(word) != "ok" {
			t.Fatalf("outcome line %q\n%s", word, errOut.String())
		}
		m := decodeFacts(t, rest)
		if m["latest_chapter"] != json.Number("1648") || m["completed"] != true || m["series_id"] != "battle-through-the-heavens" {
			t.Errorf("facts %v", m)
		}
	})

	t.Run("a missing page prints not_found and its facts, and fails the exit", func(t *testing.T) {
		var out, errOut bytes.Buffer
		err := runFetch(context.Background(), []string{"https://novelfull.com/gone-novel.html"}, nil, &out, &errOut, env)
		if !errors.Is(err, NotOKError{Outcome: word.NotFound}) || exitCode(err) != exitNotOK {
			t.Fatalf("runFetch: %v (exit %d), want the not-ok error", err, exitCode(err))
		}
		word, rest, _ := bytes.Cut(out.Bytes(), []byte("\n"))
		if string(word) != "not_found" {
			t.Errorf("output %q", out.String())
		}
		if m := decodeFacts(t, rest); m["series_id"] != "gone-novel" {
			t.Errorf("facts %v", m)
		}
		if !strings.Contains(errOut.String(), "status=404") {
			t.Errorf("stderr %q", errOut.String())
		}
	})

	for _, tc := range []struct {
		name string
		args []string
		env  func(string) string
		want string
	}{
		{"no address", nil, env, "expected one Series address"},
		{"an address of no Site", []string{"https://example.com/x"}, env, "unknown site"},
		{"an http address", []string{"http://novelfull.com/x.html"}, env, "not https"},
		{"a bad SITE_BASE_URLS", []string{"https://novelfull.com/x.html"}, func(k string) string {
			if k == "SITE_BASE_URLS" {
				return "novelfull"
			}
			return ""
		}, "SITE_BASE_URLS"},
		{"a bad BROWSER_SITES", []string{"https://novelfull.com/x.html"}, func(k string) string {
			if k == "BROWSER_SITES" {
				return "mangadex"
			}
			return ""
		}, "BROWSER_SITES"},
	} {
		t.Run("fetch refuses "+tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := runFetch(context.Background(), tc.args, nil, &out, &errOut, tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line containing %q", err, tc.want)
			}
			if exitCode(err) != 1 || out.Len() != 0 {
				t.Errorf("bad input exits %d and printed %q; want 1 and nothing", exitCode(err), out.String())
			}
		})
	}
}
