'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { mb } = require('./testkit.js');

const now = Date.parse('2026-12-01T12:00:00Z');

test('a Bookmarked Series shows my Progress, the Latest Chapter and the ember past it', () => {
  const v = mb.panelView({ title: 'Nano Machine', bookmarked: true, progress: '270', latest: '272', pending: 0, now });
  assert.equal(v.bookmark, 'Bookmarked');
  assert.deepEqual(v.lines, ['Progress 270', 'Latest 272']);
  assert.equal(v.ember, true);
  assert.equal(v.pending, '');
  assert.equal(v.offline, undefined);
});

test('no ember when caught up, or for a decimal below the Latest Chapter', () => {
  assert.equal(mb.panelView({ bookmarked: true, progress: '272', latest: '272', now }).ember, false);
  assert.equal(mb.panelView({ bookmarked: true, progress: '12.5', latest: '12.25', now }).ember, false);
  assert.equal(mb.panelView({ bookmarked: true, progress: '12.25', latest: '12.5', now }).ember, true);
});

test('a Series without my Bookmark offers the Bookmark button and no ember', () => {
  const v = mb.panelView({ bookmarked: false, latest: '40', now });
  assert.equal(v.bookmark, 'Not bookmarked');
  assert.equal(v.canBookmark, true);
  assert.equal(v.ember, false);
});

test('queued writes show as ⟳ N pending, and only then', () => {
  assert.equal(mb.panelView({ pending: 1, now }).pending, '⟳ 1 pending');
  assert.equal(mb.panelView({ pending: 3, now }).pending, '⟳ 3 pending');
  assert.equal(mb.panelView({ pending: 0, now }).pending, '');
});

test('offline says so with the age of the cache it reads from', () => {
  assert.equal(mb.panelView({ offline: true, cacheAt: now - 12 * 60000, now }).offline, 'offline · as of 12 min ago');
  assert.equal(mb.panelView({ offline: true, cacheAt: now - 3 * 3600000, now }).offline, 'offline · as of 3 h ago');
  assert.equal(mb.panelView({ offline: true, cacheAt: 0, now }).offline, 'offline');
});

test('a newer userscript on the server is named', () => {
  assert.equal(mb.panelView({ update: '1.2.0', now }).update, 'Userscript 1.2.0 is available');
  assert.equal(mb.panelView({ now }).update, undefined);
});

test("the read cache takes each lookup's answer for its Series, and keeps the rest", () => {
  const here = { site: 'asurascans', seriesId: 'nano-machine' };
  const other = { site: 'comix', series_id: 'k7yg7', progress: 3 };
  const cache = { at: 1, etag: '"e"', bookmarks: [other, { site: 'asurascans', series_id: 'nano-machine', progress: 4 }] };
  const now = mb.cacheWith(cache, here, { site: 'asurascans', series_id: 'nano-machine', progress: 5 });
  assert.deepEqual(now.bookmarks.map((b) => [b.series_id, b.progress]), [['k7yg7', 3], ['nano-machine', 5]]);
  assert.equal(now.etag, '"e"');
  assert.deepEqual(mb.cacheWith(cache, here, null).bookmarks, [other], 'a removed Bookmark leaves the cache');
  assert.equal(mb.cacheWith(null, here, null), null, 'no cache is made from one answer');
});
