// Package bench is `mangabookmark bench -n N`: it builds the data set
// (benchData) in a fresh database on the PostgreSQL in TEST_DATABASE_URL
// (what `make bench` provides through testdb), runs the real server against
// it with every Lane paused, goes round every owner page with one keep-alive
// client, and prints one table; then the adapters' parse, a healthy pass,
// the notices' conditions and the server's memory. Numbers only: nothing
// here is a test.
//
// The server it measures is the running executable's own `serve` command,
// started as a child process so that the memory it reports is the server's
// alone; Run is therefore meant to be called from the mangabookmark command.
package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/store"
)

// benchOwner is the owner id the bench's server runs with.
const benchOwner = "100000000000000015"

// Run is the command: its flags, then the measurements, printed to stdout.
func Run(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	n := fs.Int("n", 50_000, "Series in the data set")
	rounds := fs.Int("rounds", 30, "times each page is read")
	keep := fs.Bool("keep", false, "keep the bench database afterwards")
	reuse := fs.Bool("reuse", false, "measure the database a -keep run left at this size instead of building it again")
	if err := fs.Parse(args); err != nil {
		return err
	}
	admin := cmpOr(getenv("TEST_DATABASE_URL"), getenv("DATABASE_URL"))
	if admin == "" {
		return errors.New("bench needs a PostgreSQL: run it as `make bench N=50000`")
	}
	dbURL, drop, err := benchDatabase(ctx, admin, fmt.Sprintf("mb_bench_%d", *n), *reuse)
	if err != nil {
		return err
	}
	if !*keep {
		defer drop()
	}
	now := time.Now()
	start := time.Now()
	if err := store.Migrate(dbURL); err != nil {
		return err
	}
	if !*reuse {
		if err := loadBenchData(ctx, dbURL, *n, now); err != nil {
			return err
		}
	} else if err := pauseLanes(ctx, dbURL, now); err != nil {
		return err
	}
	if err := keepFreshnessFigure(ctx, dbURL, time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "data set: %d Series, built in %s; %s\n\n", *n, time.Since(start).Round(time.Second), machine())
	srv, err := startBenchServer(ctx, dbURL, stderr)
	if err != nil {
		return err
	}
	defer srv.stop()
	rep := report{n: *n}
	if err := srv.measurePages(ctx, dbURL, *rounds, &rep); err != nil {
		return err
	}
	rep.rssAfter = srv.rss()
	srv.stop()
	passURL, dropPass, err := benchDatabase(ctx, admin, "mb_bench_pass", false)
	if err != nil {
		return err
	}
	defer dropPass()
	if err := store.Migrate(passURL); err != nil {
		return err
	}
	rep.extras = benchExtras(ctx, dbURL, passURL, now)
	rep.print(stdout)
	fmt.Fprintf(stdout, "at the end: %s\n", machine())
	return nil
}

// machine names what the numbers were measured on: the cores and how busy
// they were (a shared machine's load average moves every figure).
func machine() string {
	load, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(load))
	if len(f) > 3 {
		f = f[:3]
	}
	return fmt.Sprintf("%d cores, load average %s", runtime.NumCPU(), strings.Join(f, " "))
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// pauseLanes pauses every Lane for a year, as benchData leaves them, for a
// reused database.
func pauseLanes(ctx context.Context, dbURL string, now time.Time) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `UPDATE poll_lanes SET paused_until = $1`, now.Add(365*24*time.Hour).Truncate(time.Millisecond))
	return err
}

// keepFreshnessFigure computes /admin's freshness figure as a running
// Lane keeps it (store.RefreshFreshnessFigure, migration 0035): the Lanes
// are paused here, and a server whose Lanes run never has the page read
// the day's Arrivals itself.
func keepFreshnessFigure(ctx context.Context, dbURL string, now time.Time) error {
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = store.New(pool).RefreshFreshnessFigure(ctx, now)
	return err
}

// benchDatabase drops and creates name on the server at adminURL (or, with
// reuse, keeps it as a -keep run left it) and returns its address and a
// func that drops it.
func benchDatabase(ctx context.Context, adminURL, name string, reuse bool) (string, func(), error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("bench: connect: %w", err)
	}
	defer conn.Close(ctx)
	ident := pgx.Identifier{name}.Sanitize()
	for _, q := range []string{`DROP DATABASE IF EXISTS ` + ident + ` WITH (FORCE)`, `CREATE DATABASE ` + ident} {
		if reuse {
			break
		}
		if _, err := conn.Exec(ctx, q); err != nil {
			return "", nil, fmt.Errorf("bench: %s: %w", q, err)
		}
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	drop := func() {
		c, err := pgx.Connect(context.Background(), adminURL)
		if err == nil {
			_, _ = c.Exec(context.Background(), `DROP DATABASE IF EXISTS `+ident+` WITH (FORCE)`)
			c.Close(context.Background())
		}
	}
	return u.String(), drop, nil
}

// benchServer is the real server, as a child process of this one, so its
// memory is its own.
type benchServer struct {
	cmd   *exec.Cmd
	base  string
	lines chan string // its request log lines
	done  chan struct{}
}

func startBenchServer(ctx context.Context, dbURL string, stderr io.Writer) (*benchServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mb-bench-")
	if err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	cmd := exec.CommandContext(ctx, self, "serve")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "LISTEN_ADDR="+addr, "PUBLIC_BASE_URL=http://"+addr,
		"OWNER_DISCORD_ID="+benchOwner, "DATA_DIR="+dir, "SESSION_KEY="+hex.EncodeToString(key),
		"TOKEN_KEY="+hex.EncodeToString(key), "DISCORD_WEBHOOK_URL=", "DISCORD_CLIENT_ID=", "BROWSER_WS_URL=")
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &benchServer{cmd: cmd, base: "http://" + addr, lines: make(chan string, 1024), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if l := sc.Text(); strings.Contains(l, "msg=request ") {
				s.lines <- l
			} else if !strings.HasPrefix(l, "time=") || strings.Contains(l, "level=ERROR") || strings.Contains(l, "level=WARN") {
				fmt.Fprintln(stderr, "server:", l)
			}
		}
	}()
	for i := 0; i < 100; i++ {
		if resp, err := http.Get(s.base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.stop()
	return nil, errors.New("bench: the server did not answer /healthz")
}

func (s *benchServer) stop() {
	if s.cmd.ProcessState != nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
}

var rssLine = regexp.MustCompile(`VmRSS:\s+(\d+) kB`)

// rss is the server's resident memory in MB.
func (s *benchServer) rss() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	m := rssLine.FindSubmatch(b)
	if m == nil {
		return 0
	}
	kb, _ := strconv.ParseFloat(string(m[1]), 64)
	return kb / 1024
}

// owner signs in through a one-time link written straight into the
// database (the server prints one too; this one needs no console).
func (s *benchServer) owner(ctx context.Context, dbURL string) (*http.Client, error) {
	st, err := store.Open(ctx, dbURL, store.Pools{Pages: 1, Lanes: 1})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	link, err := handlers.NewLoginLink(ctx, st, s.base, benchOwner, time.Now())
	if err != nil {
		return nil, err
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Post(link, "application/x-www-form-urlencoded", nil)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("bench: sign-in answered %d", resp.StatusCode)
	}
	<-s.lines // the sign-in's own request line
	return c, nil
}

// drain forgets request lines already logged (/healthz, the sign-in).
func (s *benchServer) drain() {
	for {
		select {
		case <-s.lines:
		default:
			return
		}
	}
}

// benchPage is one address the bench reads, and its budget at this size.
type benchPage struct {
	name, path string
	headers    []string
	budget     time.Duration
}

// benchPages lists every owner page: the landing page, every filter's
// first and deep keyset page, the time-compared filters with a Site and a
// kind stacked, the htmx fragment, a detail page and the Lanes.
func benchPages(ctx context.Context, dbURL string, n int) ([]benchPage, error) {
	landing, list, single := 15*time.Millisecond, 15*time.Millisecond, 15*time.Millisecond
	if n > 50_000 {
		landing, list, single = 50*time.Millisecond, 20*time.Millisecond, 10*time.Millisecond
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	var site, id string
	if err := conn.QueryRow(ctx, `SELECT site, series_id FROM series WHERE failing_since IS NOT NULL ORDER BY site, series_id LIMIT 1`).Scan(&site, &id); err != nil {
		return nil, fmt.Errorf("bench: a failing Series: %w", err)
	}
	deep := fmt.Sprintf("comix:s%07d", n/2)
	pages := []benchPage{{name: "/admin", path: "/admin", budget: landing}}
	for _, f := range store.Filters {
		name := cmpOr(string(f), "all")
		pages = append(pages,
			benchPage{name: name, path: "/admin/series?filter=" + string(f), budget: list},
			benchPage{name: name + ", deep page", path: "/admin/series?filter=" + string(f) + "&after=" + deep, budget: list})
		switch f {
		case store.FilterStale, store.FilterUnpollable, store.FilterFailing, store.FilterUnverified:
			pages = append(pages, benchPage{name: name + " +site+kind", path: "/admin/series?filter=" + string(f) + "&site=novelfull&kind=novel", budget: list})
		}
	}
	return append(pages,
		benchPage{name: "failing, htmx fragment", path: "/admin/series?filter=failing", headers: []string{"HX-Request", "true"}, budget: list},
		benchPage{name: "detail", path: "/admin/series/" + site + "/" + id, budget: single},
		benchPage{name: "lanes", path: "/admin/lanes", budget: single},
	), nil
}

// sample is one read of one page.
type sample struct {
	took, sql  time.Duration
	bytes      int
	statements int
}

var (
	statementsField = regexp.MustCompile(` statements=(\d+)`)
	sqlField        = regexp.MustCompile(` sql=(\S+)`)
)

// read gets one page and pairs it with the server's request log line.
func (s *benchServer) read(c *http.Client, p benchPage) (sample, error) {
	s.drain()
	req, _ := http.NewRequest(http.MethodGet, s.base+p.path, nil)
	for i := 0; i+1 < len(p.headers); i += 2 {
		req.Header.Set(p.headers[i], p.headers[i+1])
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return sample{}, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK {
		return sample{}, fmt.Errorf("bench: %s answered %d (%v)", p.path, resp.StatusCode, err)
	}
	out := sample{took: took, bytes: len(body)}
	select {
	case l := <-s.lines:
		if m := statementsField.FindStringSubmatch(l); m != nil {
			out.statements, _ = strconv.Atoi(m[1])
		}
		if m := sqlField.FindStringSubmatch(l); m != nil {
			out.sql, _ = time.ParseDuration(m[1])
		}
	case <-time.After(5 * time.Second):
		return sample{}, errors.New("bench: the server logged no request line")
	}
	return out, nil
}

// measurePages goes round every page rounds times (one keep-alive client,
// so every page sees the same load) and fills rep.
func (s *benchServer) measurePages(ctx context.Context, dbURL string, rounds int, rep *report) error {
	pages, err := benchPages(ctx, dbURL, rep.n)
	if err != nil {
		return err
	}
	c, err := s.owner(ctx, dbURL)
	if err != nil {
		return err
	}
	rep.rssIdle = s.rss()
	rep.pages = pages
	rep.samples = make([][]sample, len(pages))
	for r := -1; r < rounds; r++ { // round -1 warms the statement caches
		for i, p := range pages {
			sm, err := s.read(c, p)
			if err != nil {
				return err
			}
			if r >= 0 {
				rep.samples[i] = append(rep.samples[i], sm)
			}
		}
	}
	return nil
}

// report is everything the bench prints.
type report struct {
	n                 int
	pages             []benchPage
	samples           [][]sample
	rssIdle, rssAfter float64
	extras            []string
}

func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64)
}

func (r report) print(w io.Writer) {
	fmt.Fprintf(w, "| page | p50 ms | p95 ms | bytes | statements | SQL p50 ms | ratio |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for i, p := range r.pages {
		var took, sql []time.Duration
		most := 0
		for _, s := range r.samples[i] {
			took, sql = append(took, s.took), append(sql, s.sql)
			most = max(most, s.statements)
		}
		p50 := quantile(took, 0.5)
		fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %s | %.2f |\n", p.name, ms(p50), ms(quantile(took, 0.95)),
			r.samples[i][0].bytes, most, ms(quantile(sql, 0.5)), float64(p50)/float64(p.budget))
	}
	fmt.Fprintf(w, "\nratio: p50 over the page's budget at this size (under 1 is within it).\n\n")
	for _, e := range r.extras {
		fmt.Fprintln(w, e)
	}
	fmt.Fprintf(w, "server resident memory: %.1f MB idle, %.1f MB after the run (budget 60 MB)\n", r.rssIdle, r.rssAfter)
}
