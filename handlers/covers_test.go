package handlers_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A real 1×1 PNG.
var pngPixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// storeCover keeps pngPixel as the asurascans Series' cover, fetched from
// its cover address, as a Lane does.
func (h *harness) storeCover(id string) {
	h.t.Helper()
	s, err := h.store.GetSeries(context.Background(), "asurascans", id)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.store.SaveCover(context.Background(), "asurascans", id, s.CoverURL, "image/png", pngPixel, t0); err != nil {
		h.t.Fatal(err)
	}
}

func TestACoverIsServedFromOurOriginWithItsETagAndPagesLinkOnlyThere(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed([]fixture{{id: "healthy", title: "Healthy Work", url: addr, chapter: "3", checkedAgo: time.Minute, cover: "https://cdn.asurascans.com/c.png"}})
	h.storeCover("healthy")
	c := h.owner()
	for _, p := range []string{"/admin/series", "/admin/series/asurascans/healthy"} {
		page := h.get(c, p)
		img := page.testid("cover")
		src := img.AttrOr("src", "")
		if img.Length() != 1 || !strings.HasPrefix(src, "/covers/asurascans/healthy?v=") {
			t.Fatalf("%s: cover %q", p, src)
		}
		if strings.Contains(page.body, "cdn.asurascans.com") {
			t.Errorf("%s names the Site's image address: a browser would fetch it", p)
		}
		a := h.get(c, src)
		if a.status != 200 || a.header.Get("Content-Type") != "image/png" || !bytes.Equal([]byte(a.body), pngPixel) {
			t.Fatalf("%s: %d %q", src, a.status, a.header.Get("Content-Type"))
		}
		if a.header.Get("Cache-Control") != "private, max-age=31536000, immutable" || a.header.Get("ETag") == "" {
			t.Errorf("cache %q etag %q", a.header.Get("Cache-Control"), a.header.Get("ETag"))
		}
		if again := h.get(c, src, "If-None-Match", a.header.Get("ETag")); again.status != http.StatusNotModified || again.body != "" {
			t.Errorf("If-None-Match: %d", again.status)
		}
	}
	// The stable address without the page's version revalidates.
	if a := h.get(c, "/covers/asurascans/healthy"); a.status != 200 || a.header.Get("Cache-Control") != "private, no-cache" {
		t.Errorf("bare address: %d %q", a.status, a.header.Get("Cache-Control"))
	}
	// A new cover address: the page's link changes with it.
	old := h.get(c, "/admin/series").testid("cover").AttrOr("src", "")
	h.exec(`UPDATE series SET cover_url = 'https://cdn.asurascans.com/new.png' WHERE series_id = 'healthy'`)
	h.storeCover("healthy")
	if now := h.get(c, "/admin/series").testid("cover").AttrOr("src", ""); now == old || now == "" {
		t.Errorf("the link did not change with the image: %q", now)
	}
	if a := h.get(anonymous(), "/covers/asurascans/healthy"); a.status != http.StatusSeeOther {
		t.Errorf("anonymous: %d", a.status)
	}
}

// A cover that was never kept (too large, not an image, a redirect off the
// Site's hosts, too slow: the Lane records it failed and keeps nothing) is
// the drawn initial on every page, and its address answers the initial too.
func TestACoverNotKeptIsTheDrawnInitialNeverABrokenImage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed([]fixture{{id: "failed", title: "<b>nano</b> machine", url: addr, chapter: "3", checkedAgo: time.Minute, cover: "https://cdn.asurascans.com/huge.jpg"}})
	h.exec(`UPDATE series SET cover_retry_at = $1`, t0.Add(24*time.Hour))
	c := h.owner()
	for _, p := range []string{"/admin/series", "/admin/series/asurascans/failed"} {
		page := h.get(c, p)
		if page.testid("cover").Length() != 0 || page.find("img").Length() != 0 {
			t.Errorf("%s: an image for a cover that was not kept", p)
		}
		if ph := page.testid("cover-placeholder"); ph.Length() != 1 || strings.TrimSpace(ph.Text()) != "B" {
			t.Errorf("%s: placeholder %q", p, ph.Text())
		}
	}
	a := h.get(c, "/covers/asurascans/failed")
	if a.status != 200 || a.header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(a.body, ">B</text>") || strings.Contains(a.body, "<b>") {
		t.Fatalf("%d %q %s", a.status, a.header.Get("Content-Type"), a.body)
	}
	if a := h.get(c, "/covers/asurascans/no-such-series"); a.status != 200 || !strings.Contains(a.body, ">N</text>") {
		t.Fatalf("an unknown Series: %d %s", a.status, a.body)
	}
	if a := h.get(c, "/covers/no-such-site/failed"); a.status != http.StatusNotFound || strings.Contains(a.body, "</text>") {
		t.Fatalf("a cover of an unknown Site: %d %s", a.status, a.body)
	}
}
