package adapters

import (
	"strings"
	"testing"
)

// servedTwice is a title as some Sites serve it: escaped once more than the
// source needs, beside a literal "&" and "AT&T". Each source decodes it its
// own way (the HTML parser for text and attributes, once by hand for raw
// JSON); what is left is decoded once more, and a reader sees readTitle.
const (
	servedTwice = `Reader&amp;#39;s &amp;quot;Mage&amp;quot; &amp;amp; Co &amp; AT&amp;T`
	readTitle   = `Reader's "Mage" & Co & AT&T`
)

// titleCase puts servedTwice into one source of a fixture (each replacement
// must apply) and removes the sources read before it.
type titleCase struct {
	site, file, url, source string
	edits                   [][2]string
}

var titleCases = []titleCase{
	{"asurascans", "completed.html", "https://asurascans.com/comics/the-dark-mage-returns", "JSON in an island attribute", [][2]string{
		{`&quot;title&quot;: [0, &quot;The Dark Mage Returns to Enlistment&quot;]`, `&quot;title&quot;: [0, &quot;` + servedTwice + `&quot;]`},
	}},
	{"asurascans", "completed.html", "https://asurascans.com/comics/the-dark-mage-returns", "HTML text (h1)", [][2]string{
		{`&quot;title&quot;: [0, &quot;The Dark Mage Returns to Enlistment&quot;], `, ``},
		{`<h1 class="text-xl font-bold">The Dark Mage Returns to Enlistment</h1>`, `<h1 class="text-xl font-bold">` + servedTwice + `</h1>`},
	}},
	{"demonicscans", "completed.html", "https://demonicscans.org/manga/Mr.-Magical-Girl", "HTML text (h1)", [][2]string{
		{`<h1 class="big-fat-titles">Mr. Magical Girl <span`, `<h1 class="big-fat-titles">` + servedTwice + ` <span`},
	}},
	{"comix", "completed.html", "https://comix.to/title/k7yg7-the-spark-in-your-eyes", "JSON in a script", [][2]string{
		{`"title": "The Spark in Your Eyes"`, `"title": "` + servedTwice + `"`},
	}},
	{"comix", "completed.html", "https://comix.to/title/k7yg7-the-spark-in-your-eyes", "HTML text (h1)", [][2]string{
		{`"title": "The Spark in Your Eyes", `, ``},
		{`<h1 class="mpage__title">The Spark in Your Eyes</h1>`, `<h1 class="mpage__title">` + servedTwice + `</h1>`},
	}},
	{"comix", "completed.html", "https://comix.to/title/k7yg7-the-spark-in-your-eyes", "an attribute (og:title)", [][2]string{
		{`"title": "The Spark in Your Eyes", `, ``},
		{`<h1 class="mpage__title">The Spark in Your Eyes</h1>`, ``},
		{`<meta property="og:title" content="The Spark in Your Eyes">`, `<meta property="og:title" content="` + servedTwice + `">`},
	}},
	{"kagane", "completed.json", "https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162", "an API body", [][2]string{
		{`"title": "Dungeon Porter"`, `"title": "` + servedTwice + `"`},
	}},
	{"novelfull", "completed.html", "https://novelfull.com/battle-through-the-heavens.html", "HTML text (h3.title)", [][2]string{
		{`<h3 class="title" itemprop="name">Battle Through the Heavens</h3>`, `<h3 class="title" itemprop="name">` + servedTwice + `</h3>`},
	}},
	{"novelfull", "completed.html", "https://novelfull.com/battle-through-the-heavens.html", "an attribute (cover alt)", [][2]string{
		{`<h3 class="title" itemprop="name">Battle Through the Heavens</h3>`, ``},
		{`alt="Battle Through the Heavens"`, `alt="` + servedTwice + `"`},
	}},
	{"lightnovelworld", "completed.html", "https://lightnovelworld.org/novel/the-legendary-mechanic/", "JSON-LD in a script", [][2]string{
		{`"name": "The Legendary Mechanic"`, `"name": "` + servedTwice + `"`},
	}},
	{"lightnovelworld", "completed.html", "https://lightnovelworld.org/novel/the-legendary-mechanic/", "HTML text (h1)", [][2]string{
		{`"name": "The Legendary Mechanic",`, ``},
		{`<h1 class="novel-title">The Legendary Mechanic</h1>`, `<h1 class="novel-title">` + servedTwice + `</h1>`},
	}},
}

func TestATitleServedDoubleEscapedReadsAsAPersonReadsIt(t *testing.T) {
	for _, tc := range titleCases {
		t.Run(tc.site+"/"+tc.source, func(t *testing.T) {
			a, _ := ByName(tc.site)
			ref, err := Recognise(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			page := string(readFixture(t, tc.site, tc.file))
			for _, e := range tc.edits {
				if !strings.Contains(page, e[0]) {
					t.Fatalf("the fixture does not hold %q", e[0])
				}
				page = strings.Replace(page, e[0], e[1], 1)
			}
			f, err := a.Parse([]byte(page), ref)
			if err != nil {
				t.Fatal(err)
			}
			if f.Title != readTitle {
				t.Errorf("title %q, want %q", f.Title, readTitle)
			}
		})
	}
}

func TestOnlyACharacterReferenceIsDecodedOnceMore(t *testing.T) {
	for in, want := range map[string]string{
		"Omniscient Reader&#39;s Viewpoint": "Omniscient Reader's Viewpoint",
		"Tom & Jerry":                       "Tom & Jerry",
		"AT&T; R&D":                         "AT&T; R&D", // "&T;" is no reference
		"&amp;#39;":                         "&#39;",     // once more, not until it stops
		"Fish &ampChips":                    "Fish &ampChips",
		"&notareference; &#x27;":            "&notareference; '",
		"&#10;Title&#9;Two&#8238;":          "Title Two", // decoded, then whitespace folded and bidi overrides dropped
	} {
		if got := cleanTitle(in); got != want {
			t.Errorf("cleanTitle(%q) = %q, want %q", in, got, want)
		}
	}
}
