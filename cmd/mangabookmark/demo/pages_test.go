package demo

import (
	"net/http/httptest"
	"testing"
)

// The script's page edits must read, through each Site's own adapter, as
// what the timeline says happened; a demo that quietly shows nothing would be
// worse than none.
func TestTheDemoPageEditsReadAsTheTimelineSays(t *testing.T) {
	sites, err := loadDemoSites("../../../adapters/testdata")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*demoSite{}
	for _, ds := range sites {
		byName[ds.Site] = ds
		if len(ds.Series) < 4 {
			t.Errorf("%s serves %d Series, want its five fixture pages", ds.Site, len(ds.Series))
		}
	}
	for _, p := range demoPublished {
		ds := byName[p.site]
		s, err := ds.series(p.file)
		if err != nil {
			t.Fatal(err)
		}
		before, _ := readPage(ds.Site, s.Ref, ds.pages[s.Path])
		next, err := ds.Publish(p.file)
		if err != nil {
			t.Fatalf("publish %s/%s: %v", p.site, p.file, err)
		}
		after, _ := readPage(ds.Site, s.Ref, ds.pages[s.Path])
		if after.LatestChapter != next || next == before.LatestChapter {
			t.Errorf("%s/%s: Latest Chapter %s → %s, told %s", p.site, p.file, before.LatestChapter, after.LatestChapter, next)
		}
	}

	c := byName[demoCompletedSite]
	if err := c.Complete(demoCompletedFile); err != nil {
		t.Fatal(err)
	}
	s, _ := c.series(demoCompletedFile)
	if f, _ := readPage(c.Site, s.Ref, c.pages[s.Path]); !f.Completed {
		t.Errorf("%s/%s does not read completed after the Site marks it", c.Site, demoCompletedFile)
	}

	b := byName[demoRelaidSite]
	if err := b.Relayout(true); err != nil {
		t.Fatal(err)
	}
	for _, s := range b.Series {
		rec := httptest.NewRecorder()
		b.ServeHTTP(rec, httptest.NewRequest("GET", s.Path, nil))
		f, err := readPage(b.Site, s.Ref, rec.Body.Bytes())
		if err != nil || f.HasLatest {
			t.Errorf("%s%s after the layout change: err %v, latest %q; want the Series page with no chapter", b.Site, s.Path, err, f.LatestChapter)
		}
	}
	if err := b.Relayout(false); err != nil {
		t.Fatal(err)
	}
	s = b.Series[0]
	rec := httptest.NewRecorder()
	b.ServeHTTP(rec, httptest.NewRequest("GET", s.Path, nil))
	if f, _ := readPage(b.Site, s.Ref, rec.Body.Bytes()); !f.HasLatest {
		t.Errorf("%s%s reads no chapter after the layout returned", b.Site, s.Path)
	}
}
