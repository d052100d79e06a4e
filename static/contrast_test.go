package static

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// schemes reads the colour tokens of the light (:root) and dark
// (prefers-color-scheme: dark) blocks of the stylesheet; the dark scheme
// inherits every token it does not set.
func schemes(t *testing.T) map[string]map[string]string {
	t.Helper()
	b, err := files.ReadFile(CSS)
	if err != nil {
		t.Fatal(err)
	}
	css := string(b)
	dark := strings.Index(css, "@media (prefers-color-scheme: dark)")
	if dark < 0 {
		t.Fatal("no dark scheme in the stylesheet")
	}
	token := regexp.MustCompile(`(--[a-z-]+):\s*(#[0-9a-fA-F]{6})`)
	read := func(s string) map[string]string {
		m := map[string]string{}
		for _, g := range token.FindAllStringSubmatch(s, -1) {
			m[g[1]] = g[2]
		}
		return m
	}
	light := read(css[:dark])
	darkSet := read(css[dark : dark+strings.Index(css[dark:], "}\n}")])
	merged := map[string]string{}
	for k, v := range light {
		merged[k] = v
	}
	for k, v := range darkSet {
		merged[k] = v
	}
	return map[string]map[string]string{"light": light, "dark": merged}
}

func luminance(hex string) float64 {
	var c [3]float64
	for i := range c {
		n, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		v := float64(n) / 255
		if v <= 0.03928 {
			c[i] = v / 12.92
		} else {
			c[i] = math.Pow((v+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
}

func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// TestTextColoursHoldAAOnBothBackgroundsOfBothSchemes computes WCAG 2
// contrast for every text token on the page and card backgrounds: the
// admin pages set faults, notes and the failure marker in --danger at
// the small step, so 4.5:1 is the bar.
func TestTextColoursHoldAAOnBothBackgroundsOfBothSchemes(t *testing.T) {
	pairs := [][2]string{
		{"--text", "--bg"}, {"--text", "--surface"},
		{"--muted", "--bg"}, {"--muted", "--surface"},
		{"--accent", "--bg"}, {"--accent", "--surface"},
		{"--danger", "--bg"}, {"--danger", "--surface"},
		{"--on-accent", "--accent"},
		{"--ember", "--bg"}, {"--ember", "--surface"},
	}
	for name, s := range schemes(t) {
		for _, p := range pairs {
			fg, bg := s[p[0]], s[p[1]]
			if fg == "" || bg == "" {
				t.Errorf("%s: %s or %s is not a #rrggbb token", name, p[0], p[1])
				continue
			}
			if r := contrast(fg, bg); r < 4.5 {
				t.Errorf("%s: %s %s on %s %s is %.2f:1, under 4.5:1", name, p[0], fg, p[1], bg, r)
			}
		}
	}
}

// CONTEXT.md, Rules: Owner colours: the owner's Discord embeds are colour 13589581 (#cf5c4d), "the
// dark branch of --danger" — the page and the push wear the same colour.
func TestTheDarkDangerColourIsTheEmbedColour(t *testing.T) {
	t.Parallel()
	if got := schemes(t)["dark"]["--danger"]; !strings.EqualFold(got, "#cf5c4d") || 0xcf5c4d != 13589581 {
		t.Fatalf("dark --danger is %s, want #cf5c4d (13589581)", got)
	}
}

// TestControlBordersHoldThreeToOneOnBothBackgroundsOfBothSchemes: a
// control's border is how the owner finds the control (WCAG 1.4.11 asks
// 3:1 for it against what it sits on); the fault colour used as a border
// (the failure marker, a problem Lane) is held to the same bar.
func TestControlBordersHoldThreeToOneOnBothBackgroundsOfBothSchemes(t *testing.T) {
	t.Parallel()
	for name, s := range schemes(t) {
		for _, fg := range []string{"--control", "--danger", "--accent"} {
			for _, bg := range []string{"--bg", "--surface"} {
				if s[fg] == "" {
					t.Errorf("%s: %s is not a #rrggbb token", name, fg)
					continue
				}
				if r := contrast(s[fg], s[bg]); r < 3 {
					t.Errorf("%s: %s %s on %s %s is %.2f:1, under 3:1", name, fg, s[fg], bg, s[bg], r)
				}
			}
		}
	}
	b, _ := files.ReadFile(CSS)
	for _, rule := range []string{"button, .button {", "input, select {", ".chip {"} {
		css := string(b)
		i := strings.Index(css, rule)
		if i < 0 {
			t.Fatalf("no rule %q", rule)
		}
		if body := css[i : i+strings.Index(css[i:], "}")]; !strings.Contains(body, "var(--control)") {
			t.Errorf("%s does not draw its border in --control: %s", rule, body)
		}
	}
}
