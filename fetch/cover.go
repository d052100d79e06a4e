package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mangabookmark/mangabookmark/adapters"
)

// Covers are fetched by the server, never by a Reader's browser, through the
// same fetch gate as a Poll: https, no user-info, a public address after
// resolution, every redirect re-checked — with the Site's own hosts widened
// by the image hosts the Site really serves its covers from (adapters.CoverHosts).
// SITE_BASE_URLS rewrites a cover on the Site's own hosts and on its cover
// hosts just as it rewrites its pages: a Site pointed at a stand-in or a
// mirror is read there whole, and never partly from the internet.

// MaxCoverBytes caps a cover; a larger one is not kept.
const MaxCoverBytes = 2 << 20

// coverTimeout bounds one cover fetch (connect, headers and body).
const coverTimeout = 20 * time.Second

// Errors a cover fetch ends in besides the gate's and the transport's.
var (
	ErrCoverTooLarge = errors.New("cover larger than 2 MiB")
	ErrNotImage      = errors.New("cover bytes are not a JPEG, PNG, WebP, GIF or AVIF image")
)

// FetchCover fetches one Series' cover over the plain route. It is kept only
// when it is at most MaxCoverBytes and its bytes are an image.
func (r *Reader) FetchCover(ctx context.Context, site, coverURL string) (adapters.CoverImage, error) {
	a, ok := adapters.ByName(site)
	if !ok {
		return adapters.CoverImage{}, fmt.Errorf("%w: unknown site %q", ErrGate, site)
	}
	u, err := url.Parse(strings.TrimSpace(coverURL))
	if err != nil {
		return adapters.CoverImage{}, fmt.Errorf("%w: the cover address is not a URL", ErrGate)
	}
	if err := checkCoverURL(a, u); err != nil {
		return adapters.CoverImage{}, err
	}
	fr := fetchRequest{URL: u.String(), Adapter: a, Base: r.opts.BaseURLs[site], Cover: true}
	if fr.Base != nil { // checkCoverURL admitted the host: the Site's own or its cover host
		fr.URL = rewriteURL(u, fr.Base).String()
	}
	if err := r.spacing.wait(ctx, site, r.opts.Spacing); err != nil {
		return adapters.CoverImage{}, fmt.Errorf("waiting for the Site's turn: %w", err)
	}
	body, err := r.plain.fetchCover(ctx, fr, min(r.opts.Timeout, coverTimeout))
	if err != nil {
		return adapters.CoverImage{}, err
	}
	ct := SniffImage(body)
	if ct == "" {
		return adapters.CoverImage{}, ErrNotImage
	}
	return adapters.CoverImage{Body: body, ContentType: ct}, nil
}

// fetchCover GETs one cover through the gate's client: a 200 with at most
// MaxCoverBytes of body.
func (p *plainFetcher) fetchCover(ctx context.Context, fr fetchRequest, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ctx = context.WithValue(ctx, fetchRequestKey{}, fr)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fr.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrGate, err)
	}
	req.Header.Set("User-Agent", p.userAgent)
	req.Header.Set("Accept", "image/avif,image/webp,image/png,image/jpeg,image/gif;q=0.9,*/*;q=0.1")
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, transportError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("cover answered HTTP %d", resp.StatusCode)
	}
	if resp.ContentLength > MaxCoverBytes {
		return nil, ErrCoverTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxCoverBytes+1))
	if err != nil {
		return nil, transportError(err)
	}
	if len(body) > MaxCoverBytes {
		return nil, ErrCoverTooLarge
	}
	return body, nil
}

// SniffImage names the image format of b from its magic bytes, or "" when b
// is none of the five a cover may be. The Site's Content-Type is not
// trusted: what we serve from our own origin is what the bytes are.
func SniffImage(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && string(b[0:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "image/webp"
	case isAVIF(b):
		return "image/avif"
	}
	return ""
}

// isAVIF reads an ISO-BMFF "ftyp" box: the major brand or one of the
// compatible brands is avif (a still image) or avis (a sequence).
func isAVIF(b []byte) bool {
	if len(b) < 16 || string(b[4:8]) != "ftyp" {
		return false
	}
	size := int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3])
	if size < 16 || size > len(b) || size > 4096 {
		return false
	}
	brand := func(s string) bool { return s == "avif" || s == "avis" }
	if brand(string(b[8:12])) {
		return true
	}
	for i := 16; i+4 <= size; i += 4 { // after the major brand and minor version
		if brand(string(b[i : i+4])) {
			return true
		}
	}
	return false
}
