package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/handlers"
	"github.com/mangabookmark/mangabookmark/server"
	"github.com/mangabookmark/mangabookmark/store"
	"github.com/mangabookmark/mangabookmark/word"
)

// demoReader is one of the demo's Readers and where they stand.
type demoReader struct {
	ID, Name string
	// behind is how many chapters behind the Site's Latest Chapter each
	// Bookmark's Progress starts, by fixture page; -1 is no Progress yet.
	behind map[string]int
}

// demoReaders read different things at different points, so / shows embers
// lit, unlit and Progress unset. Ada has caught up with every Series that
// publishes during the demo: her embers light when the new chapters appear,
// and, with Discord mentions and the feed turned on (openFeed), she is
// mentioned in the Readers' channel and her feed gains the entries. Her id
// is a Discord user id (digits), as a Reader signed in with Discord has:
// only such a Reader can be mentioned (CONTEXT.md, Reader channel).
var demoReaders = []demoReader{
	{ID: demoAdaID, Name: "Ada", behind: map[string]int{"ongoing.html": 0, "ongoing.json": 0, "completed.html": 0, "decimal.html": 2}},
	{ID: "demo-ben", Name: "Ben", behind: map[string]int{"ongoing.html": 3, "no-status.html": 1, "completed.json": 0}},
	{ID: "demo-cy", Name: "Cy", behind: map[string]int{"decimal.json": -1, "no-status.html": -1, "completed.html": 5}},
}

// demoAdaID is Ada's made-up Discord user id.
const demoAdaID = "100000000000000001"

// demoSeed is what the demo wrote at start and needs again later.
type demoSeed struct {
	sites []*demoSite
}

// seedDemo adds the stand-ins' Series, the demo Readers with their
// Bookmarks and Progress, and the hostile Site's history of refusals. With
// --keep, on a database that already holds the demo, it adds nothing.
func seedDemo(ctx context.Context, dbURL string, sites []*demoSite, now time.Time, keep bool) (*demoSeed, error) {
	seed := &demoSeed{sites: sites}
	st, err := store.Open(ctx, dbURL, store.Pools{})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	history, err := st.ListPasses(ctx, demoHostile, now.Add(-30*24*time.Hour))
	if err != nil {
		return nil, err
	}
	if keep && len(history) > 0 {
		return seed, nil
	}
	for _, ds := range sites {
		for _, s := range ds.Series {
			if err := st.CreateSeries(ctx, store.Series{Site: ds.Site, SeriesID: s.Ref.SeriesID, URL: s.Ref.URL, Kind: string(word.Site(ds.Site).Kind())}, now); err != nil {
				return nil, err
			}
		}
	}
	for _, rd := range demoReaders {
		if err := seed.seedReader(ctx, st, rd, now); err != nil {
			return nil, err
		}
	}
	// Yesterday's passes of the hostile Site: refused, every hour.
	for at := now.Add(-demoHistory); at.Before(now); at = at.Add(time.Hour) {
		if err := st.InsertPass(ctx, store.PassRow{Site: demoHostile, StartedAt: at, FinishedAt: at, Due: 2, Counts: word.Counts{Refused: 2}}); err != nil {
			return nil, err
		}
	}
	return seed, nil
}

// seedReader gives one Reader a Bookmark on each named page of every Site,
// Progress set `behind` chapters before the page's Latest Chapter.
func (seed *demoSeed) seedReader(ctx context.Context, st *store.Store, rd demoReader, now time.Time) error {
	if err := st.UpsertReader(ctx, store.Reader{DiscordID: rd.ID, Name: rd.Name}, now); err != nil {
		return err
	}
	for _, ds := range seed.sites {
		for _, s := range ds.Series {
			behind, ok := rd.behind[s.File]
			if !ok {
				continue
			}
			if err := st.AddBookmark(ctx, rd.ID, ds.Site, s.Ref.SeriesID, now); err != nil {
				return err
			}
			f, _ := readPage(ds.Site, s.Ref, ds.original[s.Path])
			if behind < 0 || !f.HasLatest {
				continue
			}
			latest, _ := strconv.ParseFloat(f.LatestChapter, 64)
			num := strconv.FormatFloat(max(latest-float64(behind), 1), 'f', -1, 64)
			if _, err := st.SetProgress(ctx, rd.ID, ds.Site, s.Ref.SeriesID, num, "", false, now); err != nil {
				return err
			}
		}
	}
	return nil
}

// printLinks prints a fresh sign-in link for the owner, for Ada and for Ben
// (who reads in the reading room). The
// demo prints them again after each clock skip: a link lives 15 minutes on
// the demo's clock.
func (seed *demoSeed) printLinks(ctx context.Context, out io.Writer, cfg server.Config, st *store.Store, now time.Time) error {
	owner, err := handlers.NewLoginLink(ctx, st, cfg.PublicBaseURL, cfg.OwnerDiscordID, now)
	if err != nil {
		return fmt.Errorf("demo: owner sign-in link: %w", err)
	}
	fmt.Fprintf(out, "demo: sign-in links (single use, valid %s on the demo's clock):\n  owner  %s\n", handlers.LoginLinkTTL, owner)
	for _, rd := range demoReaders[:2] {
		link, err := handlers.NewLoginLink(ctx, st, cfg.PublicBaseURL, rd.ID, now)
		if err != nil {
			return fmt.Errorf("demo: reader sign-in link: %w", err)
		}
		fmt.Fprintf(out, "  %-6s %s\n", rd.Name, link)
	}
	return nil
}

// sight sends a Sighting from Ada's userscript token through the API: a
// chapter demoSightingAhead past what the Site lists, which no Poll confirms.
func (seed *demoSeed) sight(ctx context.Context, cfg server.Config, st *store.Store, w *demoWorld, site, file string) error {
	ds := w.sites[site]
	s, err := ds.series(file)
	if err != nil {
		return err
	}
	f, _ := readPage(site, s.Ref, ds.original[s.Path])
	latest, _ := strconv.ParseFloat(f.LatestChapter, 64)
	token, err := demoToken(ctx, cfg, st, demoReaders[0].ID, w.clock.Now())
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"url": s.Ref.URL, "chapters": []float64{latest + demoSightingAhead}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.PublicBaseURL+"/api/v1/sightings", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("demo: the Sighting: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("demo: the Sighting answered %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return nil
}

const demoTokenLabel = "demo userscript"

// demoToken makes a userscript token for a demo Reader, as /tokens does.
func demoToken(ctx context.Context, cfg server.Config, st *store.Store, readerID string, now time.Time) (string, error) {
	tokenKey, err := server.KeyFor(cfg.TokenKey, cfg.DataDir, "token.key")
	if err != nil {
		return "", err
	}
	// The demo's database outlives a run: the last run's token goes first,
	// or every start would add one until the cap (store.MaxTokens) refuses.
	old, err := st.ListTokens(ctx, readerID)
	if err != nil {
		return "", err
	}
	for _, t := range old {
		if t.Label == demoTokenLabel {
			if err := st.RevokeToken(ctx, readerID, t.ID); err != nil {
				return "", err
			}
		}
	}
	token, hash := handlers.NewAPIToken(tokenKey)
	if _, err := st.CreateToken(ctx, readerID, hash, demoTokenLabel, now); err != nil {
		return "", err
	}
	return token, nil
}

// openRoom gives the reading room its Reader's token and prints where it is:
// the chapter after the one the Reader has reached.
func (seed *demoSeed) openRoom(ctx context.Context, out io.Writer, cfg server.Config, st *store.Store, w *demoWorld) error {
	rd := demoRoomReader()
	token, err := demoToken(ctx, cfg, st, rd.ID, w.clock.Now())
	if err != nil {
		return err
	}
	if err := w.room.set(cfg.PublicBaseURL, token); err != nil {
		return err
	}
	ds := w.sites[demoRoomSite]
	s, err := ds.series(demoRoomFile)
	if err != nil {
		return err
	}
	f, _ := readPage(ds.Site, s.Ref, ds.original[s.Path])
	latest, _ := strconv.ParseFloat(f.LatestChapter, 64)
	start := int(latest) - rd.behind[demoRoomFile] + 1
	fmt.Fprintf(out, "demo: the reading room (the userscript on a stand-in chapter page, read as %s): %s%s%d\n", rd.Name, ds.server.URL(), demoRoomPath, start)
	return nil
}

// openFeed turns on Ada's Discord mentions and her feed, as her /settings
// would, gives the feed a fresh address (store.SetFeedSecret keeps only its
// hash, so each start prints a new one) and prints it, like the sign-in
// links.
func (seed *demoSeed) openFeed(ctx context.Context, out io.Writer, cfg server.Config, st *store.Store, now time.Time) (string, error) {
	ada := demoReaders[0]
	on := store.DefaultReaderSettings
	on.Discord, on.Feed = true, true
	if err := st.SaveReaderSettings(ctx, ada.ID, on, now); err != nil {
		return "", err
	}
	tokenKey, err := server.KeyFor(cfg.TokenKey, cfg.DataDir, "token.key")
	if err != nil {
		return "", err
	}
	secret, hash := handlers.NewFeedSecret(tokenKey)
	if err := st.SetFeedSecret(ctx, ada.ID, hash, now); err != nil {
		return "", err
	}
	feedURL := handlers.FeedURL(cfg.PublicBaseURL, secret)
	fmt.Fprintf(out, "demo: %s has Discord mentions and the feed on; her private feed (Atom): %s\n", ada.Name, feedURL)
	return feedURL, nil
}
