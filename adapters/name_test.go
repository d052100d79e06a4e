package adapters

import "testing"

func TestASeriesWithoutATitleIsNamedFromItsAddress(t *testing.T) {
	for _, tc := range []struct{ address, want string }{
		{"https://demonicscans.org/manga/Revenge-of-the-Iron%25252DBlooded-Sword-Hound", "Revenge of the Iron-Blooded Sword Hound"},
		{"https://demonicscans.org/manga/I%2527m-Really-Not-The-Demon-God%2527s-Lackey", "I'm Really Not The Demon God's Lackey"},
		{"https://demonicscans.org/manga/Martial-Peak", "Martial Peak"},
		{"https://asurascans.com/comics/nano-machine", "nano machine"},
		{"https://comix.to/title/k7yg7-the-spark-in-your-eyes", "the spark in your eyes"},
		{"https://comix.to/title/k7yg7", "k7yg7"},
		{"https://novelfull.com/battle-through-the-heavens.html", "battle through the heavens"},
		{"https://lightnovelworld.org/novel/shadow-slave/", "shadow slave"},
		{"https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162", ""},
		// Five layers of encoding: decoding stops after four rounds, never loops.
		{"https://demonicscans.org/manga/A%252525252D", "A%2D"},
		{"https://demonicscans.org/manga/Bad%zzName", "Bad%zzName"},
		{"https://demonicscans.org/manga/Bidi%E2%80%AEName", "BidiName"},
		{"not a url at all", "not a url at all"},
		{"", ""},
	} {
		if got := NameFromAddress(tc.address); got != tc.want {
			t.Errorf("NameFromAddress(%q) = %q, want %q", tc.address, got, tc.want)
		}
	}
}

func TestDisplayNamePrefersTheTitleThenTheAddressThenTheID(t *testing.T) {
	const addr = "https://demonicscans.org/manga/Revenge-of-the-Iron%25252DBlooded-Sword-Hound"
	if got := DisplayName("The Real Title", addr, "x"); got != "The Real Title" {
		t.Errorf("with a title: %q", got)
	}
	if got := DisplayName("  ", addr, "x"); got != "Revenge of the Iron-Blooded Sword Hound" {
		t.Errorf("without a title: %q", got)
	}
	if got := DisplayName("", "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162", "019c2b1c-cc9b-745f-afed-09c230759162"); got != "019c2b1c-cc9b-745f-afed-09c230759162" {
		t.Errorf("a UUID address: %q", got)
	}
}

func FuzzNameFromAddress(f *testing.F) {
	for _, s := range []string{"https://demonicscans.org/manga/Revenge-of-the-Iron%25252DBlooded-Sword-Hound", "https://comix.to/title/k7yg7-x", "%", "https://x/%E2%80%AE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, address string) {
		n := NameFromAddress(address)
		if len(n) > maxTitleLen || n != cleanText(n, maxTitleLen) {
			t.Fatalf("NameFromAddress(%q) = %q is not clean", address, n)
		}
	})
}
