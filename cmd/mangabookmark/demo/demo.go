// Package demo is `mangabookmark demo`, the product's living tour: six
// loopback stand-in Sites, a webhook sink standing in for Discord, an
// optional Chromium sidecar, and the real server (package server, run with
// the demo's clock and pace) polling them while a script of events plays
// (script.go). Safe by construction: loopback only, its own database under
// DATA_DIR/demo (never DATABASE_URL), wiped at start and removed at the end
// unless --keep (data.go).
package demo

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/server"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// The demo's POLL_SPACING and every Site's poll pace: short, so the Lanes
// see each event of the script on a pass within seconds.
const (
	demoSpacing = 250 * time.Millisecond
	demoPace    = 20 * time.Second // every Site's poll pace in the demo
	// demoListingEvery is the demo's LISTING_EVERY: short, as the demo is,
	// and half the pace, so a chapter the script releases is most often
	// named by the listing before the Series' own read comes round.
	demoListingEvery = 10 * time.Second
)

// demoOptions are the demo's flags.
type demoOptions struct {
	fixtures string
	database string // a throwaway database instead of the demo's own cluster
	keep     bool
	pace     time.Duration
	// listingEvery is LISTING_EVERY; 0 is demoListingEvery.
	listingEvery time.Duration
	script       bool // play the script on the real clock
	clock        *demoClock
	// started, when set, is handed the world once the server listens (the
	// tests drive the script themselves).
	started func(w *demoWorld)
}

// Run is the command: its flags, then the demo until ctx ends.
func Run(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	o := demoOptions{pace: demoPace, script: true, clock: &demoClock{}}
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.fixtures, "fixtures", filepath.Join("adapters", "testdata"), "the folder of fixture pages, one sub-folder per Site")
	fs.StringVar(&o.database, "database", "", "an empty PostgreSQL database to use instead of the demo's own local cluster (its contents are replaced)")
	fs.BoolVar(&o.keep, "keep", false, "keep the demo's database from the last run instead of starting afresh")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return playDemo(ctx, o, stdout, stderr, getenv)
}

// playDemo starts the stand-ins, the sink, the sidecar and the server, and
// plays the script until ctx ends; every process it started stops with it.
func playDemo(ctx context.Context, o demoOptions, stdout, stderr io.Writer, getenv func(string) string) error {
	sites, err := loadDemoSites(o.fixtures)
	if err != nil {
		return err
	}
	// LISTEN_ADDR first, then DATA_DIR's lock: a second demo stops before
	// it wipes or starts anything of the first one's (issue 23, item 9).
	ln, err := server.Listen(orDefault(getenv("LISTEN_ADDR"), server.DefaultListenAddr))
	if err != nil {
		return err
	}
	defer ln.Close()
	data, err := holdDemoData(orDefault(getenv("DATA_DIR"), "var"), o)
	if err != nil {
		return err
	}
	defer data.end(stdout) // last: once the cluster has stopped
	w, bases, down, err := startStandIns(o, sites, stdout)
	defer down()
	if err != nil {
		return err
	}
	dataDir := data.dir
	env := demoEnv(o, bases, w, dataDir, getenv)
	if w.sidecar, err = newDemoSidecar(dataDir); err != nil {
		return err
	}
	if w.sidecar != nil {
		defer w.sidecar.Stop() // also a Chromium that never answered
		if err := w.sidecar.Start(ctx); err != nil {
			return err
		}
		env["BROWSER_SITES"], env["BROWSER_WS_URL"] = "comix,kagane", w.sidecar.WSURL()
	}
	cfg, err := server.LoadConfig(func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return getenv(k)
	})
	if err != nil {
		return err
	}
	dbURL, stopDB, err := server.OpenMigrated(ctx, cfg, server.NewLogger(stderr, cfg.LogLevel), "demo")
	if err != nil {
		return err
	}
	defer stopDB()
	cfg.DatabaseURL = word.Secret(dbURL)
	seed, err := seedDemo(ctx, dbURL, sites, o.clock.Now(), o.keep)
	if err != nil {
		return err
	}
	script := demoScript(w.sidecar != nil)
	printGuide(stdout, cfg, w, data)
	printTimeline(stdout, script)
	return runDemoServer(ctx, o, ln, cfg, w, seed, script, stdout, stderr)
}

// startStandIns serves every stand-in Site and the webhook sink on loopback
// (the reading room on its Site's stand-in); down stops whatever started.
func startStandIns(o demoOptions, sites []*demoSite, stdout io.Writer) (w *demoWorld, bases []string, down func(), err error) {
	var stops []func()
	down = func() {
		for _, f := range slices.Backward(stops) {
			f()
		}
	}
	challenge, err := os.ReadFile(filepath.Join(o.fixtures, "challenge", "cloudflare.html"))
	if err != nil {
		return nil, nil, down, fmt.Errorf("demo: the challenge page: %w", err)
	}
	w = &demoWorld{sites: map[string]*demoSite{}, clock: o.clock, out: stdout}
	w.sink = &demoSink{out: stdout, clock: o.clock.Now, names: map[string]string{}}
	for _, rd := range demoReaders {
		w.sink.names[rd.ID] = rd.Name
	}
	for _, ds := range sites {
		ds.challengePage = challenge
		var h http.Handler = ds
		if ds.Site == demoRoomSite {
			w.room = &demoRoom{site: ds}
			h = w.room.handler()
		}
		if ds.server, err = listenLoopback(h); err != nil {
			return nil, nil, down, err
		}
		stops = append(stops, ds.server.Down)
		w.sites[ds.Site] = ds
		bases = append(bases, ds.Site+"="+ds.server.URL())
	}
	w.sites[demoHostile].Challenge(true)
	if w.sinkServer, err = listenLoopback(w.sink); err != nil {
		return nil, nil, down, err
	}
	stops = append(stops, w.sinkServer.Down)
	return w, bases, down, nil
}

// demoEnv is the server's environment in the demo: the stand-ins' addresses,
// the sink as both webhooks, no browser route until a sidecar starts.
func demoEnv(o demoOptions, bases []string, w *demoWorld, dataDir string, getenv func(string) string) map[string]string {
	return map[string]string{
		"DATA_DIR":            dataDir,
		"DATABASE_URL":        o.database,
		"SITE_BASE_URLS":      strings.Join(bases, ","),
		"BROWSER_SITES":       "none",
		"BROWSER_WS_URL":      "",
		"DISCORD_WEBHOOK_URL": w.sinkServer.URL() + demoOwnerHook,
		// The Readers' channel is a second webhook of the same sink, so
		// Ada's mention shows beside the owner's notices.
		"READERS_WEBHOOK_URL": w.sinkServer.URL() + demoReadersHook,
		"POLL_SPACING":        demoSpacing.String(),
		"LISTING_EVERY":       cmp.Or(o.listingEvery, demoListingEvery).String(),
		// The Lanes log every failed Poll, and the demo fails many on
		// purpose: its console shows the guide, the events and the
		// notices, and the server's errors only, unless LOG_LEVEL says.
		"LOG_LEVEL": orDefault(getenv("LOG_LEVEL"), "error"),
	}
}

// runDemoServer serves until Ctrl-C; once the server is ready it prints the
// sign-in links, opens the reading room and plays the script.
func runDemoServer(ctx context.Context, o demoOptions, ln net.Listener, cfg server.Config, w *demoWorld, seed *demoSeed, script []demoEvent, stdout, stderr io.Writer) error {
	played := make(chan error, 1)
	ready := func(st *store.Store) {
		var err error
		w.sight = func(ctx context.Context, site, file string) error { return seed.sight(ctx, cfg, st, w, site, file) }
		w.lastSkip = func(ctx context.Context, site string) (word.Skip, error) {
			rows, err := st.ListPasses(ctx, site, o.clock.Now().Add(-time.Hour))
			if err != nil || len(rows) == 0 {
				return "", err
			}
			return rows[len(rows)-1].Skip, nil
		}
		w.links = func(ctx context.Context) error { return seed.printLinks(ctx, stdout, cfg, st, o.clock.Now()) }
		w.series = st.GetSeries
		w.listingEvery, w.pace = cfg.ListingEvery, o.pace
		if err := w.links(ctx); err != nil {
			played <- err
			return
		}
		if err := seed.openRoom(ctx, stdout, cfg, st, w); err != nil {
			played <- err
			return
		}
		if w.feedURL, err = seed.openFeed(ctx, stdout, cfg, st, o.clock.Now()); err != nil {
			played <- err
			return
		}
		w.feed = func(ctx context.Context) ([]store.FeedEntry, error) { return st.FeedEntries(ctx, demoReaders[0].ID) }
		if o.started != nil {
			o.started(w)
		}
		if o.script {
			start := time.Now()
			go func() { played <- w.play(ctx, script, start) }()
		}
	}
	srvCtx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() {
		served <- server.Serve(srvCtx, cfg, stdout, stderr, server.Options{Now: o.clock.Now, Pace: o.pace, Demo: w.sink, Ready: ready, OwnLinks: true, Listener: ln})
	}()
	for {
		select {
		case err := <-served:
			return err
		case err := <-played:
			// An event or a sign-in link cut short by Ctrl-C is the stop
			// itself, not a failure of the demo.
			if err != nil && ctx.Err() == nil {
				stop()
				<-served
				return err
			}
		}
	}
}

func orDefault(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return v
}

// printGuide is the first thing the demo prints: where everything is.
func printGuide(out io.Writer, cfg server.Config, w *demoWorld, data *demoData) {
	fmt.Fprintln(out, "mangabookmark demo: everything runs on this machine's loopback; nothing reaches the internet.")
	fmt.Fprintf(out, "  server         %s (sign-in links below)\n", cfg.PublicBaseURL)
	end := "removed when the demo ends"
	if data.keep {
		end = "kept when the demo ends (--keep)"
	}
	if data.Where() == "" {
		fmt.Fprintf(out, "  database       the one given with --database; the demo's other data is in %s, %s\n", data.dir, end)
	} else {
		fmt.Fprintf(out, "  database       the demo's own cluster in %s, %s\n", data.Where(), end)
		// The binary `make demo` built: `make` leaves no mangabookmark on
		// the PATH (issue 23, item 3).
		fmt.Fprintf(out, "                 e.g. DATA_DIR=%s ./bin/mangabookmark notices\n", data.dir)
	}
	fmt.Fprintln(out, "  server log     errors only (set LOG_LEVEL=info to see every Poll that failed on purpose)")
	fmt.Fprintln(out, "  webhook sink   stands in for Discord: each owner notice is printed here as `owner notice [<word>] ...`")
	fmt.Fprintln(out, "                 and listed on /admin/demo/notices; it is the Readers' channel too (READERS_WEBHOOK_URL):")
	fmt.Fprintln(out, "                 Ada's mentions are printed as `reader announcement: Ada mentioned ...` and listed beside them")
	for _, site := range word.SiteNames() { // every Site has a stand-in
		fmt.Fprintf(out, "  stand-in       %-15s %s\n", site, w.sites[site].server.URL())
	}
	if w.sidecar != nil {
		fmt.Fprintf(out, "  sidecar        headless Chromium on %s reads comix and kagane\n", w.sidecar.WSURL())
	} else {
		fmt.Fprintf(out, "  sidecar        none: %s is not installed, so comix and kagane are not polled and the sidecar events are left out\n", chromiumPath)
	}
}
