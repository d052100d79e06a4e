package word_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mangabookmark/mangabookmark/word"
)

func TestEachOutcomeHasItsOwnCount(t *testing.T) {
	for i, o := range word.Outcomes {
		var c word.Counts
		c.Add(o)
		for j, p := range word.Outcomes {
			if want := map[bool]int{true: 1, false: 0}[i == j]; c.Of(p) != want {
				t.Errorf("after one %s, Of(%s) = %d", o, p, c.Of(p))
			}
		}
	}
	var c word.Counts
	c.Add("gone-fishing")
	if c != (word.Counts{}) || word.Outcome("gone-fishing").Valid() {
		t.Fatal("a word that is not an Outcome was counted")
	}
}

func TestEveryNoticeKindHasItsSentence(t *testing.T) {
	for _, k := range word.NoticeKinds {
		f, r := k.Fault("comix", "13 hours"), k.Repair("comix")
		if f == "" || r == "" || k.Sentence("comix", "13 hours") != upper(f)+"; "+r+"." {
			t.Errorf("%s: fault %q, repair %q, sentence %q", k, f, r, k.Sentence("comix", "13 hours"))
		}
	}
	if got := word.Stall.Sentence("comix", "13 hours"); got[:3] != "The" {
		t.Errorf("a sentence opens with a capital: %q", got)
	}
	if got := word.NoBrowserRoute.Sentence("novelfull", "1 day"); got[:9] != "novelfull" {
		t.Errorf("a Site's name keeps its case: %q", got)
	}
}

// NoticeKinds is the list the tests of every page and message iterate, so a
// NoticeKind constant missing from it would go untested everywhere.
func TestNoticeKindsListsEveryNoticeKindConstant(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var declared []word.NoticeKind
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if v, ok := n.(*ast.ValueSpec); ok {
				if id, ok := v.Type.(*ast.Ident); ok && id.Name == "NoticeKind" {
					for _, val := range v.Values {
						if lit, ok := val.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							declared = append(declared, word.NoticeKind(lit.Value[1:len(lit.Value)-1]))
						}
					}
				}
			}
			return true
		})
	}
	if len(declared) != len(word.NoticeKinds) {
		t.Errorf("declared NoticeKinds %v, listed %v", declared, word.NoticeKinds)
	}
	for _, k := range declared {
		if !slices.Contains(word.NoticeKinds, k) {
			t.Errorf("the NoticeKind %q is not in word.NoticeKinds", k)
		}
	}
}

func upper(s string) string {
	if s[0] >= 'a' && s[0] <= 'z' && s[:len("comix")] != "comix" {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

func TestChapterNumbersHaveOneSpelling(t *testing.T) {
	for in, want := range map[string]string{"12": "12", "012": "12", "12.50": "12.5", "+7": "7", "0.0": "0", "100.25": "100.25"} {
		if got, ok := word.ParseChapter(in); !ok || string(got) != want {
			t.Errorf("ParseChapter(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", ".", "12a", "-1", "12345678", "1.23456", "1e3"} {
		if got, ok := word.ParseChapter(in); ok {
			t.Errorf("ParseChapter(%q) = %q, want refused", in, got)
		}
	}
}

func TestChaptersCompareByNumber(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want int
	}{
		{"equal numbers are equal", "110", "110", 0},
		{"a longer integer is larger", "100", "99", 1},
		{"a fraction is above its integer", "12.5", "12", 1},
		{"fractions compare by value not by length", "12.5", "12.25", 1},
		{"trailing zeros do not matter", "12.50", "12.5", 0},
		{"leading zeros do not matter", "007", "7", 0},
		{"a smaller number is smaller", "3", "12", -1},
		{"an unreadable number sorts below", "x", "1", -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := word.Chapter(tc.a).Compare(word.Chapter(tc.b)); got != tc.want {
				t.Errorf("Chapter(%q).Compare(%q) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func TestEachOutcomeHasPlainWordsNamedForItsRoute(t *testing.T) {
	seen := map[string]word.Outcome{}
	for _, o := range word.Outcomes {
		p := o.Plain()
		if p == "" || p == string(o) {
			t.Errorf("%s has no plain words of its own: %q", o, p)
		}
		if other, dup := seen[p]; dup {
			t.Errorf("%s and %s both read %q", o, other, p)
		}
		seen[p] = o
	}
	if got := word.Unreachable.PlainOn(word.RoutePlain); got != "Site not reached" {
		t.Errorf("plain-route unreachable reads %q", got)
	}
	if got := word.Unreachable.PlainOn(word.RouteBrowser); got != "sidecar unreachable" {
		t.Errorf("browser-route unreachable reads %q", got)
	}
	if got := word.Outcome("gone-fishing").PlainOn(word.RoutePlain); got != "gone-fishing" {
		t.Errorf("an unknown word reads %q", got)
	}
}

// A name ending in s takes a bare apostrophe: "demonicscans' Series", never
// "demonicscans's".
func TestAPossessiveAfterAFinalSIsABareApostrophe(t *testing.T) {
	for name, want := range map[string]string{"demonicscans": "demonicscans'", "asurascans": "asurascans'",
		"comix": "comix's", "kagane": "kagane's"} {
		if got := word.Possessive(name); got != want {
			t.Errorf("Possessive(%q) = %q, want %q", name, got, want)
		}
	}
	if got := word.AdapterBroken.Sentence("demonicscans", "13 hours"); !strings.HasPrefix(got, "More than half of demonicscans' Series") {
		t.Errorf("sentence %q", got)
	}
}
