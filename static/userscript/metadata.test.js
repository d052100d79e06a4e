'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { mb, script } = require('./testkit.js');

const source = fs.readFileSync(script, 'utf8');
const historyFile = path.join(__dirname, 'versions.txt');

// metadata parses the block the managers read: [key, value] pairs in order.
function metadata(text) {
  const m = /^\/\/ ==UserScript==\n([\s\S]*?)\n\/\/ ==\/UserScript==\n/.exec(text);
  assert.ok(m, 'the file starts with the metadata block');
  return m[1].split('\n').map((line) => {
    const k = /^\/\/ @(\S+)(?:\s+(.*))?$/.exec(line);
    assert.ok(k, `a metadata line reads // @key value: ${line}`);
    return [k[1], (k[2] || '').trim()];
  });
}
const meta = metadata(source);
const values = (key) => meta.filter(([k]) => k === key).map(([, v]) => v);

test('the metadata block is the first thing in the file', () => {
  assert.ok(source.startsWith('// ==UserScript==\n'));
});

test('@name and @namespace are fixed for ever: changing either installs a second script', () => {
  assert.deepEqual(values('name'), ['MangaBookmark']);
  assert.deepEqual(values('namespace'), ['https://github.com/mangabookmark/mangabookmark']);
});

test('@version is MAJOR.MINOR.PATCH and the script reports the same version to the API', () => {
  assert.deepEqual(values('version'), [mb.VERSION]);
  assert.match(mb.VERSION, /^\d+\.\d+\.\d+$/);
});

test('one @match per Site host, current and old, and one for our /tokens page', () => {
  const matches = values('match');
  const siteHosts = ['asurascans.com', 'asuracomic.net', 'asuratoon.com', 'asurascans.net', 'demonicscans.org', 'comix.to', 'comix.ws',
    'kagane.to', 'kagane.org', 'novelfull.com', 'novelfull.net', 'lightnovelworld.org', 'lightnovelworld.com', 'lightnovelworld.co'];
  assert.deepEqual(matches.filter((m) => m !== '__TOKENS_MATCH__').sort(), siteHosts.map((h) => `https://*.${h}/*`).sort());
  assert.equal(matches.filter((m) => m === '__TOKENS_MATCH__').length, 1, 'the server fills in the /tokens match');
});

test('every GM call the script makes is granted in both spellings', () => {
  const grants = new Set(values('grant'));
  for (const [dot, underscore] of [['GM.xmlHttpRequest', 'GM_xmlhttpRequest'], ['GM.getValue', 'GM_getValue'], ['GM.setValue', 'GM_setValue'],
    ['GM.deleteValue', 'GM_deleteValue'], ['GM.registerMenuCommand', 'GM_registerMenuCommand']]) {
    assert.ok(grants.has(dot), dot);
    assert.ok(grants.has(underscore), underscore);
    const used = dot.slice(3);
    assert.ok(source.includes(`'${used}'`) || source.includes(underscore), `${used} is used`);
  }
  assert.ok(!grants.has('none'));
  assert.ok(!source.includes('localStorage'), "the Sites' own localStorage is never used");
  assert.ok(!/\bfetch\(/.test(source), "the page's fetch is never used");
});

test('@run-at document-idle, @noframes, @connect and the update addresses are present', () => {
  assert.deepEqual(values('run-at'), ['document-idle']);
  assert.deepEqual(values('noframes'), ['']);
  assert.deepEqual(values('connect'), ['__CONNECT_HOST__']);
  assert.deepEqual(values('downloadURL'), ['__BASE_URL__/userscript/mangabookmark.user.js']);
  assert.deepEqual(values('updateURL'), ['__BASE_URL__/userscript/mangabookmark.meta.js']);
  assert.ok(!values('connect').includes('*'), 'never @connect *');
});

// bodyHash is the script's hash without its two version lines, so that bumping
// the version is the only change that does not need a new version.
function bodyHash(text) {
  const body = text.split('\n').filter((l) => !/^\/\/ @version\s/.test(l) && !/^\s*const VERSION = '/.test(l)).join('\n');
  return crypto.createHash('sha256').update(body).digest('hex');
}

function history() {
  return fs.readFileSync(historyFile, 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#')).map((l) => {
    const [version, hash] = l.trim().split(/\s+/);
    return { version, hash };
  });
}

const cmp = (a, b) => {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
};

test('a changed script carries a new version (versions.txt holds each version beside its script hash)', () => {
  const h = history();
  const last = h.at(-1);
  assert.equal(last.version, mb.VERSION, `versions.txt's last line is for ${last.version}, the script says ${mb.VERSION}`);
  const now = bodyHash(source);
  assert.equal(now, last.hash,
    `the script changed since ${last.version}: raise @version and VERSION in mangabookmark.user.js, then append "<new version> ${now}" to static/userscript/versions.txt`);
});

test('versions only go up and no script is released twice', () => {
  const h = history();
  for (let i = 1; i < h.length; i++) assert.ok(cmp(h[i].version, h[i - 1].version) > 0, `${h[i].version} after ${h[i - 1].version}`);
  assert.equal(new Set(h.map((x) => x.hash)).size, h.length, 'a hash repeats: a version was added without a change');
  for (const x of h) assert.match(x.hash, /^[0-9a-f]{64}$/);
});

test('the body hash ignores the version lines and nothing else', () => {
  const bumped = source.replace(`// @version      ${mb.VERSION}`, '// @version      99.0.0').replace(`const VERSION = '${mb.VERSION}'`, "const VERSION = '99.0.0'");
  assert.notEqual(bumped, source);
  assert.equal(bodyHash(bumped), bodyHash(source));
  assert.notEqual(bodyHash(source.replace('QUEUE_MAX = 500', 'QUEUE_MAX = 501')), bodyHash(source));
});
