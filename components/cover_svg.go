package components

import "html"

// CoverPlaceholderSVG is the drawn initial as an image of a large cover's
// size: what /covers/… answers when no image is stored, so even a page that
// links a cover that has since gone shows the initial, never a broken image.
func CoverPlaceholderSVG(title string) string {
	return `<svg xmlns="http://www.w3.org/2000/svg" width="96" height="136" viewBox="0 0 96 136">` +
		`<rect width="96" height="136" rx="4" fill="#d9d4cc"/>` +
		`<text x="48" y="82" font-family="sans-serif" font-size="44" text-anchor="middle" fill="#5b554c">` +
		html.EscapeString(coverInitial(title)) + `</text></svg>`
}
