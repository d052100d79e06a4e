'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { mb, fakeManager } = require('./testkit.js');

const BASE = 'http://127.0.0.1:9';
const SERIES = 'https://asurascans.com/comics/nano-machine-7f873ca6';

// A Series page listing chapters 1 to 7: only what sightingsOf reads.
function seriesPage() {
  const links = [1, 2, 3, 4, 5, 6, 7].map((n) => ({ href: `${SERIES}/chapter/${n}`, textContent: `Chapter ${n}` }));
  return { document: { title: '', querySelectorAll: () => links, querySelector: () => null }, location: { href: SERIES } };
}

// leavesAfter is the manager as a page sees it that unloads after n calls:
// every later call never answers.
function leavesAfter(gm, n) {
  let calls = 0;
  const w = {};
  for (const [k, f] of Object.entries(gm)) w[k] = typeof f === 'function' ? (...a) => (calls++ < n ? f(...a) : new Promise(() => {})) : f;
  return w;
}

const settle = async () => { for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r)); };

test('a page that leaves at any moment of a Sighting loses it to no later page', async () => {
  const here = { ...mb.recognise(SERIES), address: SERIES };
  for (let n = 0; n < 40; n++) {
    const fm = fakeManager(() => ({ status: 200, body: {} }));
    fm.store.set('token', JSON.stringify('mbk_test'));
    const sent = () => fm.requests.filter((r) => r.url.endsWith('/api/v1/sightings') && JSON.parse(r.data).chapters[0] === 7).length;
    const gone = leavesAfter(fm.gm, n);
    const s1 = mb.sync(gone, mb.client(gone, BASE, Date.now), { base: BASE });
    mb.reportSightings(seriesPage(), here, s1, gone);
    await settle();
    // The next page of the same Series, with the same storage.
    const s2 = mb.sync(fm.gm, mb.client(fm.gm, BASE, Date.now), { base: BASE });
    await mb.reportSightings(seriesPage(), here, s2, fm.gm);
    await s2.drain(true);
    assert.ok(sent() >= 1, `the page left after ${n} manager calls and the Sighting never reached the server`);
  }
});
