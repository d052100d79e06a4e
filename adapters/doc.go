// Package adapters knows the six Sites: it recognises a Series address,
// names the address to read, and parses the Site's page into Facts. It is the
// pure half of the read path: bytes in, facts out. It never fetches, and it
// imports no HTTP client and no browser driver; package fetch (the gate, the
// plain and browser routes, classification, covers and the Reader) carries
// the I/O and calls Parse with the bytes it brought back. Recognition, chapter
// addresses (ChapterOf, ChapterURL, NextChapter) and display names
// (DisplayName) live here too, so the handlers, the userscript's rules and the
// tools read a Site without reaching the network.
//
// # Adapters
//
// One file per Site (asurascans.go, demonicscans.go, comix.go, kagane.go,
// novelfull.go, lightnovelworld.go) holds that Site's Adapter; its selectors and
// JSON keys are named values at the top of the file. Recognise maps a Series
// page, a chapter page of it, or a legacy address shape to the Site, a stable
// series_id and the canonical address. Parse takes bytes and never fetches; it
// reads the title, cover, Latest Chapter (the highest number on the Series' own
// list, canonical decimal) and the Site's own completed value (CONTEXT.md, Rules: Completion hint value:
// a missing marker is not completed, never an error). It returns ErrNotSeries
// only when the body is not the Site's Series page at all.
//
// # Listings
//
// Each Site's latest-updates listing is read by the same adapter, in
// <site>_listing.go (Lister: ListingTarget and ParseListing; listing.go holds
// the contract). A listing row counts only when the adapter's own Recognise
// accepts its Series address (listedSeries), promo and "related" rows never
// count, and its chapter is read the way the Site's Series page reads one. A
// listing is a hint (CONTEXT.md, Listing): only a read of the Series' own page
// writes its Latest Chapter. A page without the listing's anchor wraps
// ErrNotListing, never "no updates".
//
// # Where an adapter may look
//
// Real Sites move their blocks about: a chapter list ends up outside the
// details container, wrapped in another element, after the footer, or before
// the details. An adapter that insists on one layout reads no chapter from a
// page that plainly lists them, and a whole Site turns into no_chapter and a
// false adapter-broken notice. So the rule has two halves.
//
// Scope like the public parsers that have tracked these Sites for years. An
// adapter may anchor only on what they rely on: an element's own id or class
// (div#chapters-list a.chplinks, script#initial-data, ul.l-chapters), a JSON
// key or what an island's props carry, a label's text (the "Status" row).
// It never requires an exact parent, a depth or a sibling order the references
// do not require; where it prefers a container (Demonic Scans' details under
// div#manga-info-container), it falls back to the whole document.
//
// Guard like us, so that widening is safe:
//
//   - Only this Series' own chapters count, checked by address: the link's
//     whole path must be a chapter address of the Series (its slug, title
//     segment, hid or id), or the JSON row must name the Series. A "related",
//     "popular" or "latest updates" block, which uses the same markup for other
//     Series, never counts, wherever it sits.
//   - A link to another host never counts: every chapter passes through
//     latest.offer, which drops an address whose host is not the Site's. Links
//     are resolved against the page's address before any check, so a host is
//     never lost on the way.
//   - Details that name another Series (a JSON-LD Book with another url, a
//     react-query detail entry with another hid, an island with another slug)
//     are never this Series' details.
//
// The variant fixtures (testdata/variants/<site>/) move every block an adapter
// reads and add another Series' blocks; each must read the facts its Site's
// completed page reads.
//
// # Text as a person reads it
//
// A title is decoded by its source (the HTML parser for text and attributes,
// once by hand for JSON in a script or an API body); a well-formed character
// reference still left after that is decoded once more, because Sites serve
// some titles escaped twice (Reader&amp;#39;s). A bare "&" is literal text and
// stays. A Series without a parsed title is shown by DisplayName, a name made
// from its address.
//
// # The reference parsers
//
// The public scrapers the adapters follow, per Site (the projects that have
// tracked these Sites for years; their selectors and JSON keys are where an
// adapter may anchor):
//
//	asurascans       keiyoushi/extensions-source (src/en/asurascans),
//	                 manga-download/haruneko (AsuraScans), KotatsuApp/kotatsu-parsers
//	                 (AsuraScansParser), elboletaire/manga-downloader (plainhtml)
//	demonicscans     keiyoushi/extensions-source (src/en/mangademon),
//	                 manga-download/haruneko (MangaDemon), KotatsuApp/kotatsu-parsers
//	                 (DemonicScans), elboletaire/manga-downloader (plainhtml)
//	comix            keiyoushi/extensions-source (src/en/comix),
//	                 manga-download/haruneko (Comix), elboletaire/manga-downloader
//	                 (comix), Aidoku-Community/sources (en.comix)
//	kagane           keiyoushi/extensions-source (src/all/kagane),
//	                 manga-download/haruneko (Kagane)
//	novelfull        dipu-bd/lightnovel-crawler (novelfull), LNReader/lnreader-plugins
//	                 (readnovelfull), shosetsuorg/extensions (NovelFull)
//	lightnovelworld  dipu-bd/lightnovel-crawler (lightnovelworld.com, novelpub),
//	                 LNReader/lnreader-plugins (lightnovelworld)
//
// docs/adr/0014 records why an adapter scopes like them and guards by address.
package adapters
