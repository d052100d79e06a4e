'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { mb, readCases } = require('./testkit.js');

// The one table of cases the server's adapter tests read too.
for (const c of readCases()) {
  test(`recognition: ${c.name}`, () => {
    const got = mb.recognise(c.address);
    if (c.site === null) {
      assert.equal(got, null, `${c.address} should be no Series`);
      return;
    }
    assert.ok(got, `${c.address} should be recognised`);
    assert.equal(got.site, c.site);
    assert.equal(got.seriesId, c.series_id);
    assert.equal(got.chapter, c.chapter);
  });
}

test('every Site of the script appears in the shared cases', () => {
  const sites = new Set(readCases().filter((c) => c.site).map((c) => c.site));
  for (const s of ['asurascans', 'demonicscans', 'comix', 'kagane', 'novelfull', 'lightnovelworld']) {
    assert.ok(sites.has(s), `no case for ${s}`);
  }
});

test('chapter labels read as the adapters read them', () => {
  const cases = [
    ['Chapter 110 - Title', '110'], ['Chapter 1234: Title', '1234'], ['12.50', '12.5'], ['12.0', '12'],
    ['007', '7'], ['Ch. 66', '66'], ['Ep. 40 - Mimic Market', '40'], ['C1430 End', '1430'],
    ['Volume 2 Chapter 12.5: Interlude', '12.5'], ['chapter #3', '3'], ['Episode 9', '9'],
    ['Epic 5', null], ['Reach 5', null], ['Genius No More', null], ['', null], ['Chapter 99999999', null], ['-3', null],
  ];
  for (const [label, want] of cases) assert.equal(mb.parseChapterNumber(label), want, label);
});

test('chapter numbers compare by value, never by float or by length', () => {
  assert.equal(mb.compareChapters('100', '99'), 1);
  assert.equal(mb.compareChapters('12.5', '12.25'), 1);
  assert.equal(mb.compareChapters('12.50', '12.5'), 0);
  assert.equal(mb.compareChapters('3', '12'), -1);
  assert.equal(mb.compareChapters('1000000.0001', '1000000'), 1);
});

// A fake page: only what sightingsOf and chapterOfPage read.
function page(links, title, og) {
  return {
    title: title || '',
    querySelectorAll: () => links.map(([href, text]) => ({ href, textContent: text || '' })),
    querySelector: () => (og ? { getAttribute: () => og } : null),
  };
}

test("Sightings are the page's own Series' chapter numbers, highest first, never a sidebar's", () => {
  const here = mb.recognise('https://asurascans.com/comics/nano-machine/chapter/270');
  const doc = page([
    ['https://asurascans.com/comics/nano-machine/chapter/271', 'Next'],
    ['https://asurascans.com/comics/nano-machine/chapter/269', 'Prev'],
    ['https://asurascans.com/comics/nano-machine/chapter/271', 'Chapter 271 again'],
    ['https://asurascans.com/comics/other-series/chapter/9999', 'Chapter 9999'],
    ['https://asurascans.com/comics/nano-machine', 'Series page'],
    ['https://example.com/comics/nano-machine/chapter/500', 'elsewhere'],
  ]);
  assert.deepEqual(mb.sightingsOf(doc, here), ['271', '269']);
});

test('a Kagane reader link names its number in its text', () => {
  const here = mb.recognise('https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162/reader/019c2bda-0000-7000-8000-000000000003');
  const doc = page([['https://kagane.to/series/019c2b1c-cc9b-745f-afed-09c230759162/reader/019c2bda-0000-7000-8000-000000000004', 'Ep. 41 - Next']],
    'Kagane', 'Dungeon Porter Ep. 40');
  assert.deepEqual(mb.sightingsOf(doc, here), ['41']);
  assert.equal(mb.chapterOfPage(doc, here), '40');
});

test('at most 50 numbers go in one Sighting, the highest ones', () => {
  const here = mb.recognise('https://comix.to/title/k7yg7-x');
  const links = Array.from({ length: 80 }, (_, i) => [`https://comix.to/title/k7yg7-x/${1000 + i}-chapter-${i + 1}`, '']);
  const got = mb.sightingsOf(page(links), here);
  assert.equal(got.length, mb.SIGHTING_MAX);
  assert.equal(got[0], '80');
  assert.equal(got[49], '31');
});

test('only a link to a later chapter of the same Series is a next-chapter link', () => {
  const here = mb.recognise('https://novelfull.com/battle-through-the-heavens/chapter-5-x.html');
  assert.ok(mb.isNextChapterLink('https://novelfull.com/battle-through-the-heavens/chapter-6-y.html', here, '5'));
  assert.ok(!mb.isNextChapterLink('https://novelfull.com/battle-through-the-heavens/chapter-4-y.html', here, '5'));
  assert.ok(!mb.isNextChapterLink('https://novelfull.com/other-novel/chapter-6-y.html', here, '5'));
  assert.ok(!mb.isNextChapterLink('https://novelfull.com/battle-through-the-heavens.html', here, '5'));
});

test('a chapter counts as read past 90% of a page that scrolls, never on a page too short to scroll', () => {
  const win = (scrollY, height) => ({ scrollY, innerHeight: 800, document: { documentElement: { scrollHeight: height }, body: { scrollHeight: height } } });
  assert.equal(mb.readShare(win(0, 10000)) >= mb.READ_SHARE, false, 'just opened');
  assert.equal(mb.readShare(win(8300, 10000)) >= mb.READ_SHARE, true, 'scrolled to 91%');
  assert.equal(mb.readShare(win(0, 900)), 0, 'a page with nothing to scroll');
});

test('the tokens page is ours only on our own origin and path', () => {
  assert.ok(mb.isTokensPage('http://192.168.1.10:8080/tokens', 'http://192.168.1.10:8080'));
  assert.ok(mb.isTokensPage('https://mb.example.org/tokens?x=1', 'https://mb.example.org'));
  assert.ok(!mb.isTokensPage('https://mb.example.org.evil.test/tokens', 'https://mb.example.org'));
  assert.ok(!mb.isTokensPage('https://mb.example.org/tokensx', 'https://mb.example.org'));
  assert.ok(!mb.isTokensPage('https://asurascans.com/tokens', 'https://mb.example.org'));
});

test('a page is read at its own address unless the manager names the Site address it stands for', () => {
  const win = { location: { href: 'https://asurascans.com/comics/nano-machine/chapter/3' } };
  assert.equal(mb.addressOf(win, mb.manager({ GM: { getValue() {}, setValue() {} } })), win.location.href);
  const room = { GM: { getValue() {}, setValue() {}, pageAddress: () => 'https://asurascans.com/comics/nano-machine/chapter/9' } };
  const demoWin = { location: { href: 'http://127.0.0.1:4000/reading-room/9' } };
  assert.equal(mb.addressOf(demoWin, mb.manager(room)), 'https://asurascans.com/comics/nano-machine/chapter/9');
  assert.equal(mb.recognise(mb.addressOf(demoWin, mb.manager(room))).chapter, '9');
});
