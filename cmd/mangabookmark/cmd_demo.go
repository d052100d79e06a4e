package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/store/word"
)

// The demo's story, told by its stand-in Sites:
//   - five Sites answer with their fixture pages: Latest Chapters, completion
//     hints and a Series whose page has no chapter (no_chapter) appear;
//   - one asurascans Series points at a page the Site no longer has (not_found);
//   - novelfull turned hostile yesterday: it answers every request with a
//     challenge. The pass log starts with thirteen hours of its refusals, so
//     the first pass finds no-browser-route held past ownerWindow and the
//     owner notice goes to the local webhook sink, which prints it.
const (
	demoHostile     = "novelfull"
	demoReader      = "demo-reader"
	demoHistory     = 13 * time.Hour
	demoSpacing     = 250 * time.Millisecond
	demoMissingPath = "/comics/a-series-that-was-taken-down-0badc0de"
)

// standIn is one Site's local stand-in: the fixture body for each path.
type standIn struct {
	site  string
	pages map[string][]byte
	api   bool // the Site's Series are read as JSON (kagane)
	refs  []adapters.Ref
}

// loadStandIns reads the fixture pages of every Site and learns, from each
// page itself, which Series it is and which path the adapter will fetch.
func loadStandIns(dir string) ([]*standIn, error) {
	var out []*standIn
	for _, site := range word.SiteNames() {
		a, _ := adapters.ByName(site)
		files, err := filepath.Glob(filepath.Join(dir, site, "*"))
		if err != nil || len(files) == 0 {
			return nil, fmt.Errorf("demo: no fixture pages for %s in %s (run the demo from the repository, or pass --fixtures)", site, dir)
		}
		sort.Strings(files)
		si := &standIn{site: site, pages: map[string][]byte{}}
		for _, f := range files {
			body, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("demo: %w", err)
			}
			ref, ok := pageRef(site, body)
			if !ok {
				continue
			}
			target := a.Target(ref)
			u, err := url.Parse(target.URL)
			if err != nil {
				continue
			}
			si.api = target.API
			si.pages[u.RequestURI()] = body
			si.refs = append(si.refs, ref)
		}
		out = append(out, si)
	}
	return out, nil
}

// pageRef is the Series a fixture page belongs to.
func pageRef(site string, body []byte) (adapters.Ref, bool) {
	if ref, ok := adapters.RefFromPage(site, body); ok {
		return ref, true
	}
	var v struct {
		SeriesID string `json:"series_id"`
	}
	if site == "kagane" && json.Unmarshal(body, &v) == nil && v.SeriesID != "" {
		ref, err := adapters.Recognise("https://kagane.to/series/" + v.SeriesID)
		return ref, err == nil
	}
	return adapters.Ref{}, false
}

// serve answers the stand-in's pages; the hostile Site answers a challenge.
func (si *standIn) serve(challenge []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if si.site == demoHostile {
			w.Header().Set("cf-mitigated", "challenge")
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write(challenge)
			return
		}
		body, ok := si.pages[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if si.api {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		_, _ = w.Write(body)
	})
}

// runDemo is `mangabookmark demo`: six local stand-in Sites, a webhook sink
// that prints what the owner would receive, and the real server polling them.
func runDemo(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fixtures := fs.String("fixtures", filepath.Join("adapters", "testdata"), "the folder of fixture pages, one sub-folder per Site")
	if err := fs.Parse(args); err != nil {
		return err
	}
	standIns, err := loadStandIns(*fixtures)
	if err != nil {
		return err
	}
	challenge, err := os.ReadFile(filepath.Join(*fixtures, "challenge", "cloudflare.html"))
	if err != nil {
		return fmt.Errorf("demo: the challenge page: %w", err)
	}

	var servers []*http.Server
	defer func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}()
	listen := func(h http.Handler) (string, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("demo: listen: %w", err)
		}
		s := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
		servers = append(servers, s)
		go func() { _ = s.Serve(ln) }()
		return "http://" + ln.Addr().String(), nil
	}
	var bases []string
	for _, si := range standIns {
		base, err := listen(si.serve(challenge))
		if err != nil {
			return err
		}
		bases = append(bases, si.site+"="+base)
	}
	sink, err := listen(webhookSink(stdout))
	if err != nil {
		return err
	}

	env := map[string]string{
		"SITE_BASE_URLS":      strings.Join(bases, ","),
		"BROWSER_SITES":       "none", // every stand-in is read over plain HTTP
		"DISCORD_WEBHOOK_URL": sink + "/api/webhooks/demo/sink",
		"POLL_SPACING":        demoSpacing.String(),
	}
	demoEnv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		if k == "DATA_DIR" && getenv(k) == "" {
			return filepath.Join("var", "demo") // never the data of `make run`
		}
		return getenv(k)
	}
	cfg, err := loadConfig(demoEnv)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel)
	dbURL, stopDB, err := openMigrated(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stopDB()
	if err := seedDemo(ctx, dbURL, standIns, time.Now()); err != nil {
		return err
	}
	env["DATABASE_URL"] = dbURL
	fmt.Fprintf(stdout, "demo: six stand-in Sites and a webhook sink on loopback; %s refuses every request since %s ago\n", demoHostile, demoHistory)
	return runServe(ctx, nil, stdin, stdout, stderr, demoEnv)
}

// seedDemo adds the stand-ins' Series, a Reader who bookmarks some of them,
// and the hostile Site's history of refusals. It runs again harmlessly on a
// database that already holds the demo.
func seedDemo(ctx context.Context, dbURL string, standIns []*standIn, now time.Time) error {
	st, err := store.Open(ctx, dbURL, store.Pools{})
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.UpsertReader(ctx, store.Reader{DiscordID: demoReader, Name: "Demo Reader"}, now); err != nil {
		return err
	}
	add := func(ref adapters.Ref, bookmark bool) error {
		a, _ := adapters.ByName(ref.Site)
		if err := st.CreateSeries(ctx, store.Series{Site: ref.Site, SeriesID: ref.SeriesID, URL: ref.URL, Kind: a.Kind()}, now); err != nil {
			return err
		}
		if bookmark {
			return st.AddBookmark(ctx, demoReader, ref.Site, ref.SeriesID, now)
		}
		return nil
	}
	for _, si := range standIns {
		for i, ref := range si.refs {
			if err := add(ref, i%2 == 0); err != nil {
				return err
			}
		}
	}
	missing, err := adapters.Recognise("https://asurascans.com" + demoMissingPath)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := add(missing, false); err != nil {
		return err
	}
	// Yesterday's passes of the hostile Site: refused, every hour.
	history, err := st.ListPasses(ctx, demoHostile, now.Add(-demoHistory-time.Hour))
	if err != nil {
		return err
	}
	if len(history) > 0 {
		return nil
	}
	for at := now.Add(-demoHistory); at.Before(now); at = at.Add(time.Hour) {
		if err := st.InsertPass(ctx, store.PassRow{Site: demoHostile, StartedAt: at, FinishedAt: at, Due: 2, Counts: word.Counts{Refused: 2}}); err != nil {
			return err
		}
	}
	return nil
}

// webhookSink stands in for Discord: it accepts each message and prints
// what the owner would read on their phone.
func webhookSink(out io.Writer) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			Embeds []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
				Footer      struct {
					Text string `json:"text"`
				} `json:"footer"`
			} `json:"embeds"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&p); err != nil {
			http.Error(w, "not a webhook message", http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, e := range p.Embeds {
			fmt.Fprintf(out, "owner notice [%s] %s: %s (%s)\n", e.Footer.Text, e.Title, e.Description, e.URL)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
