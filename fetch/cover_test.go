package fetch

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
)

// A real 1×1 PNG.
var pngPixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

func TestACoverIsKeptOnlyWhenItIsASmallImageOnAnAllowedHost(t *testing.T) {
	t.Parallel()
	other := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(pngPixel) })
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok.png":
			w.Header().Set("Content-Type", "text/html") // the header is not believed
			_, _ = w.Write(pngPixel)
		case "/large.jpg", "/large-declared.jpg":
			body := append([]byte{0xFF, 0xD8, 0xFF}, bytes.Repeat([]byte{0}, MaxCoverBytes)...)
			if r.URL.Path == "/large-declared.jpg" {
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			}
			_, _ = w.Write(body)
		case "/page.jpg":
			w.Header().Set("Content-Type", "image/jpeg")
			_, _ = w.Write([]byte("<!doctype html><title>Just a moment...</title>"))
		case "/away.jpg":
			http.Redirect(w, r, other.URL+"/ok.png", http.StatusFound)
		case "/home.jpg":
			http.Redirect(w, r, "/ok.png", http.StatusFound)
		case "/slow.jpg":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		default:
			http.NotFound(w, r)
		}
	})
	rd := readerFor(t, "asurascans", srv, func(o *ReaderOptions) { o.Timeout = 10 * time.Second })
	impatient := readerFor(t, "asurascans", srv, func(o *ReaderOptions) { o.Timeout = 300 * time.Millisecond })
	fetch := func(u string) (adapters.CoverImage, error) {
		if strings.HasSuffix(u, "/slow.jpg") {
			return impatient.FetchCover(context.Background(), "asurascans", u)
		}
		return rd.FetchCover(context.Background(), "asurascans", u)
	}
	img, err := fetch("https://cdn.asurascans.com/ok.png")
	if err != nil || img.ContentType != "image/png" || !bytes.Equal(img.Body, pngPixel) {
		t.Fatalf("a PNG on the Site's CDN: %q %v", img.ContentType, err)
	}
	if img, err := fetch("https://asurascans.com/home.jpg"); err != nil || img.ContentType != "image/png" {
		t.Fatalf("a redirect on the Site's own host: %v", err)
	}
	cases := []struct {
		name, url string
		want      func(error) bool
	}{
		{"too large", "https://asurascans.com/large.jpg", func(e error) bool { return errors.Is(e, ErrCoverTooLarge) }},
		{"declared too large", "https://asurascans.com/large-declared.jpg", func(e error) bool { return errors.Is(e, ErrCoverTooLarge) }},
		{"not an image", "https://asurascans.com/page.jpg", func(e error) bool { return errors.Is(e, ErrNotImage) }},
		{"a redirect off the allowed hosts", "https://asurascans.com/away.jpg", func(e error) bool { return errors.Is(e, ErrGate) }},
		{"slow", "https://asurascans.com/slow.jpg", func(e error) bool { return errors.Is(e, context.DeadlineExceeded) }},
		{"missing", "https://asurascans.com/none.jpg", func(e error) bool { return e != nil && strings.Contains(e.Error(), "404") }},
		{"another Site's host", "https://demoniclibs.com/images/covers/x.jpg", func(e error) bool { return errors.Is(e, ErrGate) }},
		{"plain http", "http://asurascans.com/ok.png", func(e error) bool { return errors.Is(e, ErrGate) }},
		{"user-info", "https://u:p@asurascans.com/ok.png", func(e error) bool { return errors.Is(e, ErrGate) }},
	}
	for _, c := range cases {
		if _, err := fetch(c.url); !c.want(err) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if other.hits.Load() != 0 {
		t.Errorf("the host off the list was reached %d times", other.hits.Load())
	}
}

func TestACoverHostOfTheSiteIsAllowedButStillGated(t *testing.T) {
	t.Parallel()
	a, _ := adapters.ByName("demonicscans")
	for u, ok := range map[string]bool{
		"https://demoniclibs.com/images/covers/Martial-Peak.jpg": true,
		"https://cdn.demoniclibs.com/x.jpg":                      true,
		"https://demonicscans.org/images/x.jpg":                  true,
		"https://demoniclibs.com.evil.test/x.jpg":                false,
		"https://demoniclibs.com:8443/x.jpg":                     false,
		"http://demoniclibs.com/x.jpg":                           false,
	} {
		pu, _ := url.Parse(u)
		if err := checkCoverURL(a, pu); (err == nil) != ok {
			t.Errorf("%s: %v", u, err)
		}
	}
	// The cover host still goes through the dialer's public-address rule.
	rd := NewReader(ReaderOptions{Resolve: func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}})
	if _, err := rd.FetchCover(context.Background(), "demonicscans", "https://demoniclibs.com/images/covers/x.jpg"); !errors.Is(err, ErrGate) {
		t.Fatalf("a cover host resolving to loopback: %v", err)
	}
}

func TestSniffImageKnowsTheFiveFormatsAndNothingElse(t *testing.T) {
	t.Parallel()
	avif := append([]byte("\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf"), 0, 0)
	avifCompat := []byte("\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00avismiaf")
	for b, want := range map[string]string{
		string(pngPixel):               "image/png",
		"\xff\xd8\xff\xe0\x00\x10JFIF": "image/jpeg",
		"GIF89a\x01\x00":               "image/gif",
		"RIFF\x10\x00\x00\x00WEBPVP8 ": "image/webp",
		string(avif):                   "image/avif",
		string(avifCompat):             "image/avif",
		"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00isommp42": "",
		"<svg xmlns='http://www.w3.org/2000/svg'/>":        "",
		"<!doctype html>":          "",
		"":                         "",
		"RIFF\x10\x00\x00\x00WAVE": "",
	} {
		if got := SniffImage([]byte(b)); got != want {
			t.Errorf("%q: %q, want %q", b, got, want)
		}
	}
}

func FuzzSniffImage(f *testing.F) {
	f.Add(pngPixel)
	f.Add([]byte("\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf"))
	f.Add([]byte("\xff\xff\xff\xffftypavif"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBP"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ct := SniffImage(b)
		if ct != "" && !strings.HasPrefix(ct, "image/") {
			t.Fatalf("%q", ct)
		}
	})
}

// SITE_BASE_URLS points a Site elsewhere, its cover hosts included: a
// stand-in or a mirror serves the covers its pages name, and no cover of a
// Site pointed at loopback is fetched from the internet.
func TestUnderSiteBaseURLsACoverOnTheSitesCoverHostIsFetchedFromTheBase(t *testing.T) {
	t.Parallel()
	var asked atomic.Value
	srv := newSiteServer(t, func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.URL.RequestURI())
		_, _ = w.Write(pngPixel)
	})
	rd := readerFor(t, "demonicscans", srv, func(o *ReaderOptions) {
		// Were the cover host dialled, it would resolve to loopback and be
		// refused: the test never reaches the internet.
		o.Resolve = func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
	})
	img, err := rd.FetchCover(context.Background(), "demonicscans", "https://demoniclibs.com/images/covers/Martial-Peak.jpg")
	if err != nil || img.ContentType != "image/png" {
		t.Fatalf("a cover on the Site's cover host under SITE_BASE_URLS: %q %v", img.ContentType, err)
	}
	if got := asked.Load(); got != "/images/covers/Martial-Peak.jpg" {
		t.Fatalf("the base was asked for %v", got)
	}
}
