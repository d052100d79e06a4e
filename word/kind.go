package word

// Kind is what a Series is: manga (read as pages of images) or a novel (read
// as text). It follows from the Site alone (CONTEXT.md, Series).
type Kind string

// The two Kinds.
const (
	Manga Kind = "manga"
	Novel Kind = "novel"
)

// Kinds lists the two Kinds in display order.
var Kinds = []Kind{Manga, Novel}

// siteKinds is the one place a Site's Kind is said.
var siteKinds = map[Site]Kind{
	Asurascans:      Manga,
	Demonicscans:    Manga,
	Comix:           Manga,
	Kagane:          Manga,
	Novelfull:       Novel,
	Lightnovelworld: Novel,
}

// Kind is the Kind of every Series of the Site; "" for a word that is not
// one of the six Sites.
func (s Site) Kind() Kind { return siteKinds[s] }

// SQL is k as an SQL string literal, for data written in SQL (the bench).
func (k Kind) SQL() string { return sqlText(string(k)) }
