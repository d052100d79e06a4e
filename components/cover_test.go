package components_test

import (
	"testing"

	"github.com/mangabookmark/mangabookmark/components"
)

func TestACoverIsItsImageOrTheDrawnInitialOfItsTitle(t *testing.T) {
	tests := []struct {
		name        string
		view        components.CoverView
		wantImg     bool
		wantInitial string
		wantClass   string
	}{
		{"an address draws the image in its box", components.CoverView{URL: "/covers/comix/42", Title: "A Work"}, true, "", "cover-sm"},
		{"no address draws the title's initial", components.CoverView{Title: "nano machine"}, false, "N", "cover-sm"},
		{"the initial skips leading punctuation", components.CoverView{Title: "«Überkind»", Size: components.CoverLarge}, false, "Ü", "cover-lg"},
		{"a title with no letter draws a question mark", components.CoverView{Title: "…"}, false, "?", "cover-sm"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := renderDoc(t, components.Cover(tc.view))
			img, ph := doc.Find(`img[data-testid="cover"]`), doc.Find(`[data-testid="cover-placeholder"]`)
			if tc.wantImg {
				if img.Length() != 1 || ph.Length() != 0 || img.AttrOr("src", "") != tc.view.URL || !img.HasClass(tc.wantClass) {
					t.Fatalf("want one image %s in %s, got img=%d placeholder=%d", tc.view.URL, tc.wantClass, img.Length(), ph.Length())
				}
				return
			}
			if img.Length() != 0 || ph.Length() != 1 {
				t.Fatalf("want the placeholder alone, got img=%d placeholder=%d", img.Length(), ph.Length())
			}
			if got := ph.Text(); got != tc.wantInitial || !ph.HasClass(tc.wantClass) {
				t.Errorf("placeholder %q (classes %q), want %q in %s", got, ph.AttrOr("class", ""), tc.wantInitial, tc.wantClass)
			}
		})
	}
}
