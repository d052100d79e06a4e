package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"net/url"
	"path"
	"strings"

	"github.com/mangabookmark/mangabookmark/adapters"
)

// A stand-in serves each Series' cover where its page names it, as the
// real Site does, so the demo's rows show covers the server fetched through
// its fetch gate (SITE_BASE_URLS points the Site, cover hosts included, at
// the stand-in). The images are drawn at start: no file is shipped.

// demoCover is one cover a stand-in serves.
type demoCover struct {
	body        []byte
	contentType string
}

// Cover size: the detail page's box (96×136) at a little under 2×.
const demoCoverW, demoCoverH = 180, 256

// coverPath is the request URI the fetch of a page's cover asks the
// stand-in for, or "" when the page names no cover.
func coverPath(site string, ref adapters.Ref, body []byte) (string, string) {
	f, err := readPage(site, ref, body)
	if err != nil || f.CoverURL == "" {
		return "", ""
	}
	u, err := url.Parse(f.CoverURL)
	if err != nil {
		return "", ""
	}
	return u.RequestURI(), f.Title
}

// drawCover is a cover for title: a two-colour sky, a sun and two rows of
// hills, its hues taken from the title so every Series looks its own. A
// .jpg address gets JPEG bytes, any other PNG (Go writes no WebP; the
// server trusts the bytes, never the address or the Content-Type).
func drawCover(title, where string) (demoCover, error) {
	h := fnv.New32a()
	h.Write([]byte(title))
	seed := h.Sum32()
	hue := float64(seed%360) / 360
	img := image.NewRGBA(image.Rect(0, 0, demoCoverW, demoCoverH))
	sunX, sunY, sunR := 40+float64(seed>>9%100), 50+float64(seed>>17%60), 22.0
	for y := range demoCoverH {
		t := float64(y) / demoCoverH
		sky := mix(hsv(hue, 0.55, 0.35), hsv(hue+0.12, 0.45, 0.95), t)
		far := 150 + 18*math.Sin(float64(seed%7+2)*0.03*float64(y))
		for x := range demoCoverW {
			c := sky
			fx, fy := float64(x), float64(y)
			switch {
			case fy > 190+14*math.Sin(fx/23+float64(seed%5)):
				c = hsv(hue+0.5, 0.5, 0.28)
			case fy > far+12*math.Sin(fx/31+float64(seed%11)):
				c = hsv(hue+0.45, 0.4, 0.5)
			case math.Hypot(fx-sunX, fy-sunY) < sunR:
				c = hsv(hue+0.1, 0.25, 1)
			}
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if strings.EqualFold(path.Ext(where), ".jpg") || strings.EqualFold(path.Ext(where), ".jpeg") {
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
			return demoCover{}, fmt.Errorf("demo: draw a cover: %w", err)
		}
		return demoCover{body: buf.Bytes(), contentType: "image/jpeg"}, nil
	}
	if err := png.Encode(&buf, img); err != nil {
		return demoCover{}, fmt.Errorf("demo: draw a cover: %w", err)
	}
	return demoCover{body: buf.Bytes(), contentType: "image/png"}, nil
}

// hsv is a colour from hue (turns, any value), saturation and value in [0,1].
func hsv(h, s, v float64) color.RGBA {
	h = (h - math.Floor(h)) * 6
	i, f := math.Floor(h), h-math.Floor(h)
	p, q, t := v*(1-s), v*(1-s*f), v*(1-s*(1-f))
	r, g, b := [6]float64{v, q, p, p, t, v}[int(i)%6], [6]float64{t, v, v, q, p, p}[int(i)%6], [6]float64{p, p, t, v, v, q}[int(i)%6]
	return color.RGBA{uint8(r * 255), uint8(g * 255), uint8(b * 255), 255}
}

func mix(a, b color.RGBA, t float64) color.RGBA {
	l := func(x, y uint8) uint8 { return uint8(float64(x)*(1-t) + float64(y)*t) }
	return color.RGBA{l(a.R, b.R), l(a.G, b.G), l(a.B, b.B), 255}
}

// demoKaganeTitles are the titles kagane's stand-in gives the Series it
// makes from one fixture (ownSeries), by index: a Site names its Series
// apart, and so must its stand-in, or four rows read "Dungeon Porter".
var demoKaganeTitles = []string{"", "The Mimic Market", "Eleventh Floor Cook", "Porter's Rest Inn", "Dungeon Porter & Friends"}

// ownFace gives a page made into a Series of its own (ownSeries) its own
// title and cover image: the title where the page's JSON holds it, the
// cover's image id with its last characters the page's index. A page whose
// title is written another way keeps it.
func ownFace(site string, body []byte, ref adapters.Ref, i int) []byte {
	f, err := readPage(site, ref, body)
	if err != nil {
		return body
	}
	if i < len(demoKaganeTitles) && demoKaganeTitles[i] != "" && f.Title != "" {
		old, _ := json.Marshal(f.Title)
		repl, _ := json.Marshal(demoKaganeTitles[i])
		body = bytes.ReplaceAll(body, old, repl)
	}
	if id := path.Base(f.CoverURL); len(id) > 2 && f.CoverURL != "" {
		body = bytes.ReplaceAll(body, []byte(id), []byte(id[:len(id)-2]+fmt.Sprintf("%02x", i)))
	}
	return body
}
