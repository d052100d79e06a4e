'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { mb, fakeManager } = require('./testkit.js');

const progress = (seriesId, chapter, extra) => ({ kind: 'progress', site: 'asurascans', seriesId, url: `https://asurascans.com/comics/${seriesId}/chapter/${chapter}`, chapter, ...extra });
const sighting = (seriesId, chapters) => ({ kind: 'sightings', site: 'asurascans', seriesId, url: `https://asurascans.com/comics/${seriesId}`, chapters });
let n = 0;
const keys = () => `key-${++n}`;

test('a newer write of one Series replaces the older entry and holds the highest chapter', () => {
  let q = mb.enqueue([], progress('a', '10'), { now: 1, newKey: keys }).list;
  q = mb.enqueue(q, progress('a', '12'), { now: 2, newKey: keys }).list;
  q = mb.enqueue(q, progress('a', '11'), { now: 3, newKey: keys }).list;
  assert.equal(q.length, 1);
  assert.equal(q[0].chapter, '12');
  assert.equal(q[0].url, 'https://asurascans.com/comics/a/chapter/12');
  assert.equal(q[0].created, 1, 'the entry keeps its place in the queue');
});

test('decimal chapters coalesce by value: 12.5 beats 12.25 and 12', () => {
  let q = mb.enqueue([], progress('a', '12.25'), { now: 1, newKey: keys }).list;
  q = mb.enqueue(q, progress('a', '12.5'), { now: 2, newKey: keys }).list;
  q = mb.enqueue(q, progress('a', '12'), { now: 3, newKey: keys }).list;
  assert.equal(q[0].chapter, '12.5');
});

test('Progress and Sightings of one Series are separate entries; other Series their own', () => {
  let q = mb.enqueue([], progress('a', '10'), { now: 1, newKey: keys }).list;
  q = mb.enqueue(q, sighting('a', ['11', '12']), { now: 2, newKey: keys }).list;
  q = mb.enqueue(q, progress('b', '3'), { now: 3, newKey: keys }).list;
  assert.deepEqual(q.map((e) => e.key), ['progress:asurascans/a', 'sightings:asurascans/a', 'progress:asurascans/b']);
});

test('Sightings of one Series merge into the highest distinct numbers', () => {
  let q = mb.enqueue([], sighting('a', ['10', '11']), { now: 1, newKey: keys }).list;
  q = mb.enqueue(q, sighting('a', ['11', '12.5', '9']), { now: 2, newKey: keys }).list;
  assert.deepEqual(q[0].chapters, ['12.5', '11', '10', '9']);
});

test('an entry gets a new Idempotency-Key exactly when its payload changes', () => {
  let q = mb.enqueue([], progress('a', '10'), { now: 1, newKey: () => 'k1' }).list;
  assert.equal(q[0].idempotencyKey, 'k1');
  q = mb.enqueue(q, progress('a', '9'), { now: 2, newKey: () => 'k2' }).list;
  assert.equal(q[0].idempotencyKey, 'k1', 'a lower chapter changes nothing, so the key stays');
  q = mb.enqueue(q, progress('a', '11'), { now: 3, newKey: () => 'k3' }).list;
  assert.equal(q[0].idempotencyKey, 'k3', 'a new payload is named by a new key');
  q = mb.enqueue(q, progress('a', '11', { bookmark: true }), { now: 4, newKey: () => 'k4' }).list;
  assert.equal(q[0].idempotencyKey, 'k4', 'asking for the Bookmark changes the payload too');
  assert.equal(q[0].bookmark, true);
});

test('the default keys are distinct UUIDs', () => {
  const a = mb.enqueue([], progress('a', '1'), { now: 1 }).list[0].idempotencyKey;
  const b = mb.enqueue([], progress('a', '1'), { now: 1 }).list[0].idempotencyKey;
  assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(a, b);
});

test('the queue holds at most 500 Series; past the cap the oldest Sighting goes first', () => {
  let q = [];
  q = mb.enqueue(q, progress('oldest-progress', '1'), { now: 0, newKey: keys }).list;
  q = mb.enqueue(q, sighting('old-sighting', ['5']), { now: 1, newKey: keys }).list;
  for (let i = 2; i < mb.QUEUE_MAX; i++) q = mb.enqueue(q, progress('s' + i, '1'), { now: i, newKey: keys }).list;
  assert.equal(q.length, mb.QUEUE_MAX);
  const r = mb.enqueue(q, progress('newest', '1'), { now: 1000, newKey: keys });
  assert.equal(r.list.length, mb.QUEUE_MAX);
  assert.deepEqual(r.evicted.map((e) => e.seriesId), ['old-sighting']);
  assert.ok(r.list.some((e) => e.seriesId === 'newest'));
  const r2 = mb.enqueue(r.list, progress('newer', '1'), { now: 1001, newKey: keys });
  assert.deepEqual(r2.evicted.map((e) => e.seriesId), ['oldest-progress'], 'with no Sighting left, the oldest Progress goes');
});

test('coalescing into a full queue evicts nothing', () => {
  let q = [];
  for (let i = 0; i < mb.QUEUE_MAX; i++) q = mb.enqueue(q, progress('s' + i, '1'), { now: i, newKey: keys }).list;
  const r = mb.enqueue(q, progress('s7', '2'), { now: 9999, newKey: keys });
  assert.equal(r.evicted.length, 0);
  assert.equal(r.list.length, mb.QUEUE_MAX);
});

test('the eviction message names the Series dropped', () => {
  const text = mb.say.evicted({ kind: 'progress', chapter: '12', title: 'Nano Machine', site: 'asurascans', seriesId: 'nano-machine' });
  assert.match(text, /Nano Machine/);
  assert.match(text, /Progress 12/);
  assert.match(mb.say.evicted({ kind: 'progress', chapter: '3', site: 'comix', seriesId: 'k7yg7' }), /comix\/k7yg7/);
});

test('the queue drains oldest first, due entries only, unless starting fresh', () => {
  const q = [
    { key: 'c', created: 30, nextAt: 0 },
    { key: 'a', created: 10, nextAt: 500 },
    { key: 'b', created: 20, nextAt: 0 },
  ];
  assert.deepEqual(mb.drainOrder(q, 100, false).map((e) => e.key), ['b', 'c']);
  assert.deepEqual(mb.drainOrder(q, 100, true).map((e) => e.key), ['a', 'b', 'c']);
});

test('backoff is full jitter: random up to base·2^attempts, capped at five minutes', () => {
  assert.equal(mb.backoffDelay(1, () => 0.999999), Math.floor(0.999999 * 4000));
  assert.equal(mb.backoffDelay(3, () => 0.5), 8000);
  assert.equal(mb.backoffDelay(1, () => 0), 0);
  assert.equal(mb.backoffDelay(40, () => 0.999999), Math.floor(0.999999 * mb.BACKOFF_CAP_MS));
});

test('Retry-After is read as seconds or as a date', () => {
  const now = Date.parse('2026-12-01T12:00:00Z');
  assert.equal(mb.retryAfterMs('120', now), 120000);
  assert.equal(mb.retryAfterMs('Tue, 01 Dec 2026 12:01:00 GMT', now), 60000);
  assert.equal(mb.retryAfterMs('Tue, 01 Dec 2026 11:00:00 GMT', now), 0);
  assert.equal(mb.retryAfterMs('', now), null);
  assert.equal(mb.retryAfterMs('soon', now), null);
});

test('a retry waits at least what Retry-After asks, and the jittered backoff when that is longer', () => {
  const e = { attempts: 0, nextAt: 0 };
  const asked = mb.scheduleRetry(e, { now: 1000, random: () => 0.99, retryAfter: '30' });
  assert.equal(asked.nextAt, 1000 + 30000);
  assert.equal(asked.attempts, 1);
  const jitter = mb.scheduleRetry({ attempts: 5, nextAt: 0 }, { now: 1000, random: () => 0.5, retryAfter: '1' });
  assert.equal(jitter.nextAt, 1000 + 0.5 * 2000 * 2 ** 6);
  const none = mb.scheduleRetry(e, { now: 1000, random: () => 0.25 });
  assert.equal(none.nextAt, 1000 + 1000);
});

test('answers are classified: retried, token, refused or done', () => {
  for (const s of [0, 408, 425, 429, 500, 502, 503, 504]) assert.equal(mb.classify(s), 'retry', String(s));
  for (const s of [401, 403]) assert.equal(mb.classify(s), 'token', String(s));
  for (const s of [400, 404, 409, 413, 415, 422]) assert.equal(mb.classify(s), 'refused', String(s));
  assert.equal(mb.classify(409, 'idempotency_key_reused'), 'refused');
  // A key still in flight (or left claimed by an outage) is taken over by the
  // server after Retry-After: the write waits, it is not dropped.
  assert.equal(mb.classify(409, 'idempotency_key_in_flight'), 'retry');
  for (const s of [200, 201, 204]) assert.equal(mb.classify(s), 'done', String(s));
});

// ---- sync: the queue against a scripted server ----

const BASE = 'http://127.0.0.1:9';

function harness(serve, token = 'mbk_test') {
  const fm = fakeManager(serve);
  fm.store.set('token', JSON.stringify(token));
  let clock = 1000;
  const notices = [];
  const api = mb.client(fm.gm, BASE, () => clock);
  const s = mb.sync(fm.gm, api, { base: BASE, now: () => clock, random: () => 0.5, notify: (kind, text) => notices.push({ kind, text }) });
  const queue = () => JSON.parse(fm.store.get('queue') || '[]');
  return { ...fm, s, notices, queue, tick: (ms) => { clock += ms; } };
}

test('a write that meets a dropped connection is queued, then sent with the same Idempotency-Key', async () => {
  let up = false;
  const h = harness(() => (up ? { status: 200, body: { applied: true } } : { status: 0 }));
  assert.equal(await h.s.write(progress('a', '5')), 'queued');
  assert.equal(h.queue().length, 1);
  assert.deepEqual(h.notices, [], 'a dropped connection says nothing but the pending count');
  up = true;
  await h.s.drain(true);
  assert.equal(h.queue().length, 0);
  assert.equal(h.requests.length, 2);
  assert.equal(h.requests[0].headers['Idempotency-Key'], h.requests[1].headers['Idempotency-Key']);
  assert.deepEqual(JSON.parse(h.requests[1].data), { url: 'https://asurascans.com/comics/a/chapter/5', chapter: 5, bookmark: false });
});

test('every call goes through GM_xmlhttpRequest without cookies, with the version and the token', async () => {
  const h = harness(() => ({ status: 200, body: {} }));
  await h.s.write(progress('a', '5'));
  const r = h.requests[0];
  assert.equal(r.anonymous, true);
  assert.equal(r.method, 'POST');
  assert.equal(r.url, BASE + '/api/v1/progress');
  assert.equal(r.headers['X-Userscript-Version'], mb.VERSION);
  assert.equal(r.headers.Authorization, 'Bearer mbk_test');
  assert.equal(r.headers['Content-Type'], 'application/json');
});

test('a 5xx and a 429 queue the write; the 429 waits out its Retry-After', async () => {
  const h = harness(() => ({ status: 429, headers: { 'Retry-After': '60' }, body: { error: 'rate_limited' } }));
  await h.s.write(progress('a', '5'));
  const [e] = h.queue();
  assert.equal(e.nextAt, 1000 + 60000);
  h.tick(30000);
  await h.s.drain(false);
  assert.equal(h.requests.length, 1, 'nothing is sent before Retry-After has passed');
  const h5 = harness(() => ({ status: 503 }));
  await h5.s.write(progress('a', '5'));
  assert.equal(h5.queue().length, 1);
  assert.deepEqual(h5.notices, []);
});

test('the server\'s database outage (503 unavailable) queues the write quietly; it is sent again after Retry-After', async () => {
  let up = false;
  const outage = { status: 503, headers: { 'Retry-After': '5' }, body: { error: 'unavailable', message: 'The database is unavailable just now; send the request again after Retry-After seconds.' } };
  const h = harness(() => (up ? { status: 200, body: { applied: true } } : outage));
  assert.equal(await h.s.write(progress('a', '5')), 'queued');
  const [e] = h.queue();
  assert.equal(e.nextAt, 1000 + 5000, 'the retry waits the 5 s the server asked for, longer than the backoff');
  assert.equal(e.lastError, '503');
  assert.deepEqual(h.notices, [], 'an outage is not a refusal: nothing is said but the pending count');
  up = true;
  h.tick(4000);
  await h.s.drain(false);
  assert.equal(h.requests.length, 1, 'nothing is sent before Retry-After has passed');
  h.tick(1000);
  await h.s.drain(false);
  assert.equal(h.requests.length, 2);
  assert.equal(h.requests[1].headers['Idempotency-Key'], h.requests[0].headers['Idempotency-Key']);
  assert.equal(h.queue().length, 0);
});

test('a key an outage left in flight (409 idempotency_key_in_flight) keeps the write; it is sent again after Retry-After, with the same key', async () => {
  // The server's sequence: the first try's key claimed and then stranded by
  // the outage (503), the retry too early for the takeover (409), the retry
  // after Retry-After taken over and applied.
  const answers = [
    { status: 503, headers: { 'Retry-After': '5' }, body: { error: 'unavailable', message: 'The database is unavailable just now; send the request again after Retry-After seconds.' } },
    { status: 409, headers: { 'Retry-After': '12' }, body: { error: 'idempotency_key_in_flight', message: 'The first request with this Idempotency-Key is still running; send again after Retry-After seconds.' } },
    { status: 200, body: { applied: true } },
  ];
  const h = harness(() => answers.shift());
  assert.equal(await h.s.write(progress('a', '5')), 'queued');
  h.tick(5000);
  await h.s.drain(false);
  assert.equal(h.requests.length, 2);
  const [e] = h.queue();
  assert.ok(e, 'the 409 dropped the write');
  assert.equal(e.nextAt, 6000 + 12000, 'the retry waits the Retry-After of the 409');
  assert.deepEqual(h.notices, [], 'a key in flight is not a refusal: nothing is said');
  h.tick(12000);
  await h.s.drain(false);
  assert.equal(h.requests.length, 3);
  assert.equal(new Set(h.requests.map((r) => r.headers['Idempotency-Key'])).size, 1);
  assert.equal(h.queue().length, 0);
});

test('a chapter the address contradicts (422 chapter_mismatch) is refused with the server\'s sentence, not retried', async () => {
  const h = harness(() => ({ status: 422, body: { error: 'chapter_mismatch', message: 'The address is of chapter 99 but "chapter" says 7; send the chapter the address names.' } }));
  assert.equal(await h.s.write({ ...progress('a', '99'), chapter: '7', title: 'Nano Machine' }), 'done');
  assert.equal(h.queue().length, 0);
  assert.equal(h.notices.length, 1);
  assert.equal(h.notices[0].kind, 'refused');
  assert.match(h.notices[0].text, /chapter 99 but "chapter" says 7/);
});

test('a 400 says what was refused and is not retried or kept', async () => {
  const h = harness(() => ({ status: 400, body: { error: 'not_a_chapter', message: 'The chapter is not a chapter number.' } }));
  assert.equal(await h.s.write({ ...progress('a', '5'), title: 'Nano Machine' }), 'done');
  assert.equal(h.queue().length, 0);
  assert.equal(h.notices.length, 1);
  assert.match(h.notices[0].text, /Nano Machine/);
  assert.match(h.notices[0].text, /not a chapter number/);
  await h.s.drain(true);
  assert.equal(h.requests.length, 1);
});

test('a 401 names what to do, keeps the Progress and sends nothing more until a new token', async () => {
  let token = 'old';
  const h = harness((opts) => (opts.headers.Authorization === 'Bearer ' + token ? { status: 401, body: { error: 'token_invalid' } } : { status: 200, body: {} }), 'old');
  await h.s.write(progress('a', '5'));
  assert.equal(h.notices[0].kind, 'token');
  assert.match(h.notices[0].text, /\/tokens/);
  assert.match(h.notices[0].text, /new/);
  assert.equal(h.queue().length, 1, 'Progress read is kept for the new token');
  await h.s.drain(false);
  await h.s.drain(true);
  assert.equal(h.requests.length, 1, 'a refused token is not tried again, by a retry or a fresh drain');
  h.store.set('token', JSON.stringify('new'));
  await h.s.drain(true);
  assert.equal(h.queue().length, 0);
  assert.equal(h.requests.at(-1).headers.Authorization, 'Bearer new');
});

test('without any token the write waits in the queue and the panel says where to get one', async () => {
  const h = harness(() => ({ status: 200 }), '');
  await h.s.write(progress('a', '5'));
  assert.equal(h.requests.length, 0);
  assert.equal(h.queue().length, 1);
  assert.match(h.notices[0].text, /\/tokens/);
});

test('drain sends oldest first and stops at the first that must wait', async () => {
  let up = false;
  const seen = [];
  const h = harness((opts) => {
    if (!up) return { status: 0 };
    seen.push(JSON.parse(opts.data).url);
    return seen.length === 2 ? { status: 503 } : { status: 200, body: {} };
  });
  await h.s.write(progress('first', '1'));
  h.tick(10);
  await h.s.write(progress('second', '1'));
  h.tick(10);
  await h.s.write(progress('third', '1'));
  assert.equal(h.queue().length, 3);
  up = true;
  await h.s.drain(true);
  assert.deepEqual(seen, ['https://asurascans.com/comics/first/chapter/1', 'https://asurascans.com/comics/second/chapter/1']);
  assert.deepEqual(h.queue().map((e) => e.seriesId), ['second', 'third']);
});

test('a write while older ones wait joins the queue behind them: order is kept', async () => {
  let up = false;
  const seen = [];
  const h = harness((opts) => (up ? (seen.push(JSON.parse(opts.data).chapter), { status: 200, body: {} }) : { status: 0 }));
  await h.s.write(progress('a', '1'));
  up = true;
  h.tick(100000);
  await h.s.write(progress('b', '2'));
  assert.deepEqual(seen, [1, 2]);
  assert.equal(h.queue().length, 0);
});

test('reading two chapters of one Series while the server is away leaves one pending entry, the higher', async () => {
  const h = harness(() => ({ status: 0 }));
  await h.s.write(progress('a', '7'));
  await h.s.write(progress('a', '8'));
  assert.equal(h.queue().length, 1);
  assert.equal(h.queue()[0].chapter, '8');
});

test('an entry replaced while it was being sent stays, under its new key', async () => {
  let release;
  const h = harness(() => new Promise((r) => { release = () => r({ status: 200, body: {} }); }));
  h.store.set('queue', JSON.stringify(mb.enqueue([], progress('a', '1'), { now: 0, newKey: () => 'k-old' }).list));
  const drained = h.s.drain(true);
  await new Promise((r) => setImmediate(r));
  h.store.set('queue', JSON.stringify(mb.enqueue(h.queue(), progress('a', '2'), { now: 1, newKey: () => 'k-new' }).list));
  release();
  await drained;
  assert.deepEqual(h.queue().map((e) => [e.chapter, e.idempotencyKey]), [['2', 'k-new']]);
});

test('eviction at the cap speaks up with the dropped Series', async () => {
  const h = harness(() => ({ status: 0 }));
  const full = [];
  let q = [];
  for (let i = 0; i < mb.QUEUE_MAX; i++) q = mb.enqueue(q, { ...progress('s' + i, '1'), title: 'Title ' + i }, { now: i, newKey: keys }).list;
  full.push(...q);
  h.store.set('queue', JSON.stringify(full));
  await h.s.write(progress('newest', '1'));
  const ev = h.notices.filter((x) => x.kind === 'evicted');
  assert.equal(ev.length, 1);
  assert.match(ev[0].text, /Title 0/);
  assert.equal(h.queue().length, mb.QUEUE_MAX);
});

test('the server naming a newer userscript is remembered for the panel', async () => {
  const h = harness(() => ({ status: 200, headers: { 'X-Userscript-Latest': '9.0.0' }, body: {} }));
  await h.s.write(progress('a', '1'));
  assert.equal(JSON.parse(h.store.get('latest')), '9.0.0');
  assert.equal(mb.newerVersion('9.0.0', mb.VERSION), true);
  assert.equal(mb.newerVersion(mb.VERSION, mb.VERSION), false);
  assert.equal(mb.newerVersion('1.10.0', '1.9.9'), true);
  assert.equal(mb.newerVersion('garbage', '1.0.0'), false);
});

test('Greasemonkey 4 (GM.* only, promises) works the same', async () => {
  const store = new Map();
  const calls = [];
  const gm = mb.manager({ GM: {
    getValue: async (k, d) => (store.has(k) ? store.get(k) : d),
    setValue: async (k, v) => { store.set(k, v); },
    deleteValue: async (k) => { store.delete(k); },
    xmlHttpRequest: (o) => { calls.push(o); o.onload({ status: 200, responseHeaders: 'Content-Type: application/json', responseText: '{"ok":true}' }); },
  } });
  await gm.set('token', 't');
  assert.equal(await gm.get('token', ''), 't');
  assert.equal(await gm.get('missing', 'd'), 'd');
  const r = await mb.client(gm, BASE, () => 0).call('GET', '/api/v1/me');
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { ok: true });
  assert.equal(calls[0].anonymous, true);
});

test('the Bookmark button sends the Bookmark alone, and a failed one waits like any write', async () => {
  let up = false;
  const h = harness(() => (up ? { status: 200, body: {} } : { status: 0 }));
  await h.s.write({ kind: 'progress', site: 'comix', seriesId: 'k7yg7', url: 'https://comix.to/title/k7yg7-x', chapter: null, bookmark: true });
  assert.equal(h.queue().length, 1);
  up = true;
  await h.s.drain(true);
  assert.deepEqual(JSON.parse(h.requests.at(-1).data), { url: 'https://comix.to/title/k7yg7-x', bookmark: true });
  assert.match(mb.say.evicted({ kind: 'progress', chapter: null, site: 'comix', seriesId: 'k7yg7' }), /pending Bookmark of comix\/k7yg7/);
});

test('Progress of a Series the Reader does not bookmark is dropped without a word', async () => {
  const h = harness(() => ({ status: 404, body: { error: 'not_bookmarked', message: 'You do not bookmark this Series.' } }));
  assert.equal(await h.s.write(progress('a', '5')), 'done');
  assert.equal(h.queue().length, 0);
  assert.deepEqual(h.notices, []);
  assert.equal(mb.classify(404, 'not_found'), 'refused', 'any other 404 is said');
});

test('a write is in the queue before it is sent, so a page closed mid-request loses nothing', async () => {
  let answer;
  const h = harness(() => new Promise((r) => { answer = r; }));
  const writing = h.s.write(progress('a', '9'));
  while (!answer) await new Promise((r) => setImmediate(r));
  assert.deepEqual(h.queue().map((e) => e.chapter), ['9'], 'stored while the request is in flight');
  answer({ status: 200, body: {} });
  assert.equal(await writing, 'done');
  assert.equal(h.queue().length, 0);
});
