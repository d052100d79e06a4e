package demo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
	"github.com/mangabookmark/mangabookmark/word"
)

// demoFixtures are the fixture pages a stand-in serves, one Series each. The
// adapters' other fixtures (layout variants of the same Series) stay out.
var demoFixtures = []string{
	"ongoing.html", "completed.html", "decimal.html", "no-status.html", "no-chapters.html",
	"ongoing.json", "completed.json", "decimal.json", "no-status.json", "no-chapters.json",
}

// demoSeries is one Series a stand-in serves.
type demoSeries struct {
	Ref  adapters.Ref
	Path string // the request URI the adapter asks for
	File string // the fixture page it started as
}

// demoSite is one Site's local stand-in. What it serves changes as the
// script plays; every change goes through its methods, under its lock.
type demoSite struct {
	Site   string
	Series []demoSeries
	api    bool
	server *loopbackServer
	// challengePage is what the Site answers while it holds a challenge.
	challengePage []byte

	mu        sync.Mutex
	original  map[string][]byte
	pages     map[string][]byte
	covers    map[string]demoCover // by request URI: what the pages name
	gone      map[string]bool
	relaid    bool // serving the new layout
	challenge bool
	// published orders the listing (listing.go): a Series' value is the
	// count of chapters the stand-in had published when it published the
	// Series' latest one; 0 for a Series the script has not touched.
	published map[string]int
	releases  int
}

// loadDemoSites reads the fixture pages of every Site and learns, from each
// page itself, which Series it is and which path the adapter will fetch.
func loadDemoSites(dir string) ([]*demoSite, error) {
	var out []*demoSite
	for _, site := range word.SiteNames() {
		a, _ := adapters.ByName(site)
		ds := &demoSite{Site: site, original: map[string][]byte{}, pages: map[string][]byte{}, covers: map[string]demoCover{}, gone: map[string]bool{}, published: map[string]int{}}
		for _, name := range demoFixtures {
			file := filepath.Join(dir, site, name)
			body, err := os.ReadFile(file)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("demo: %w", err)
			}
			ref, ok := pageRef(site, body)
			if !ok {
				continue
			}
			if slices.ContainsFunc(ds.Series, func(s demoSeries) bool { return s.Ref.SeriesID == ref.SeriesID }) {
				// Another page of the same Series (kagane's fixtures share
				// one id): the stand-in serves it as a Series of its own.
				if body, ref, ok = ownSeries(site, body, ref, len(ds.Series)); !ok {
					continue
				}
			}
			target := a.Target(ref)
			u, err := url.Parse(target.URL)
			if err != nil {
				continue
			}
			ds.api = target.API
			ds.original[u.RequestURI()] = body
			ds.pages[u.RequestURI()] = body
			ds.Series = append(ds.Series, demoSeries{Ref: ref, Path: u.RequestURI(), File: name})
			if err := ds.drawCover(ref, body); err != nil {
				return nil, err
			}
		}
		if len(ds.Series) == 0 {
			return nil, fmt.Errorf("demo: no fixture pages for %s in %s (run the demo from the repository, or pass --fixtures)", site, dir)
		}
		out = append(out, ds)
	}
	return out, nil
}

// ownSeries gives a page another Series id: the last characters of its id
// become the page's index, everywhere the id appears in the page.
func ownSeries(site string, body []byte, ref adapters.Ref, i int) ([]byte, adapters.Ref, bool) {
	id := ref.SeriesID
	if len(id) < 2 {
		return nil, adapters.Ref{}, false
	}
	newID := id[:len(id)-2] + fmt.Sprintf("%02x", i)
	body = bytes.ReplaceAll(body, []byte(id), []byte(newID))
	r, ok := pageRef(site, body)
	if ok {
		body = ownFace(site, body, r, i)
	}
	return body, r, ok && r.SeriesID == newID
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

// drawCover draws the cover a Series' page names, once per address.
func (ds *demoSite) drawCover(ref adapters.Ref, body []byte) error {
	where, title := coverPath(ds.Site, ref, body)
	if _, ok := ds.covers[where]; ok || where == "" {
		return nil
	}
	c, err := drawCover(title, where)
	if err != nil {
		return err
	}
	ds.covers[where] = c
	return nil
}

// series finds one of the stand-in's Series by the fixture it started as.
func (ds *demoSite) series(file string) (demoSeries, error) {
	i := slices.IndexFunc(ds.Series, func(s demoSeries) bool { return s.File == file })
	if i < 0 {
		return demoSeries{}, fmt.Errorf("demo: %s has no %s page", ds.Site, file)
	}
	return ds.Series[i], nil
}

// ServeHTTP answers as the Site does at this point of the script.
func (ds *demoSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if ds.answerListing(w, r) {
		return
	}
	ds.mu.Lock()
	challenge, gone := ds.challenge, ds.gone[r.URL.RequestURI()]
	body, ok := ds.pages[r.URL.RequestURI()]
	cover, isCover := ds.covers[r.URL.RequestURI()]
	if ok && ds.relaid {
		if b, err := relayout(ds.Site, ds.refOf(r.URL.RequestURI()), body); err == nil {
			body = b
		}
	}
	ds.mu.Unlock()
	switch {
	case challenge:
		ds.serveChallenge(w)
	case isCover:
		w.Header().Set("Content-Type", cover.contentType)
		_, _ = w.Write(cover.body)
	case gone || !ok:
		http.NotFound(w, r)
	default:
		if ds.api {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		_, _ = w.Write(body)
	}
}

// serveChallenge answers as the Site does while it holds a challenge.
func (ds *demoSite) serveChallenge(w http.ResponseWriter) {
	w.Header().Set("cf-mitigated", "challenge")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write(ds.challengePage)
}

func (ds *demoSite) refOf(path string) adapters.Ref {
	for _, s := range ds.Series {
		if s.Path == path {
			return s.Ref
		}
	}
	return adapters.Ref{}
}

// Publish gives a Series its next chapter and returns the new number.
func (ds *demoSite) Publish(file string) (string, error) {
	s, err := ds.series(file)
	if err != nil {
		return "", err
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	body, next, err := bumpChapter(ds.Site, s.Ref, ds.pages[s.Path])
	if err != nil {
		return "", err
	}
	ds.pages[s.Path] = body
	ds.releases++
	ds.published[s.Path] = ds.releases
	return next, nil
}

// Complete marks a Series completed on its page.
func (ds *demoSite) Complete(file string) error {
	s, err := ds.series(file)
	if err != nil {
		return err
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	body, err := markCompleted(ds.Site, s.Ref, ds.pages[s.Path])
	if err != nil {
		return err
	}
	ds.pages[s.Path] = body
	return nil
}

// TakeDown makes a Series' page answer 404 (gone=true) or come back.
func (ds *demoSite) TakeDown(file string, gone bool) error {
	s, err := ds.series(file)
	if err != nil {
		return err
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	ds.gone[s.Path] = gone
	return nil
}

// Relayout switches the Site to its new layout (on) or back.
func (ds *demoSite) Relayout(on bool) error {
	for _, s := range ds.Series {
		if _, err := relayout(ds.Site, s.Ref, ds.original[s.Path]); err != nil && on {
			return err
		}
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	ds.relaid = on
	return nil
}

// Challenge makes the Site hold a challenge on every request (on) or not.
func (ds *demoSite) Challenge(on bool) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	ds.challenge = on
}

// loopbackServer is an HTTP server on one fixed loopback address that can
// stop answering (its port closed: a Poll meets a refused connection) and
// come back on the same address.
type loopbackServer struct {
	addr    string
	handler http.Handler

	mu  sync.Mutex
	srv *http.Server
}

// listenLoopback starts h on a free loopback port.
func listenLoopback(h http.Handler) (*loopbackServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo: listen: %w", err)
	}
	s := &loopbackServer{addr: ln.Addr().String(), handler: h}
	s.serve(ln)
	return s, nil
}

// URL is the server's base address.
func (s *loopbackServer) URL() string { return "http://" + s.addr }

func (s *loopbackServer) serve(ln net.Listener) {
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 5 * time.Second}
	s.srv = srv
	go func() { _ = srv.Serve(ln) }()
}

// Up makes the server answer again (a no-op when it does).
func (s *loopbackServer) Up() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return nil
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("demo: listen again on %s: %w", s.addr, err)
	}
	s.serve(ln)
	return nil
}

// Down closes the port and every open connection.
func (s *loopbackServer) Down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		_ = s.srv.Close()
		s.srv = nil
	}
}
