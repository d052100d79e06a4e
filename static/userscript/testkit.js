// Shared pieces of the userscript's Node tests: the script itself, the case
// table the Go adapter tests read too, and a fake userscript manager whose
// storage round-trips through JSON as a manager's does.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

// Browsers and managers give the script Web Crypto; Node gives it globally
// only from version 19 (Debian bookworm's nodejs is 18).
if (!globalThis.crypto) globalThis.crypto = require('node:crypto').webcrypto;

const script = path.join(__dirname, 'mangabookmark.user.js');
const mb = require(script);

function readCases() {
  const file = path.join(__dirname, '..', '..', 'adapters', 'testdata', 'recognition', 'cases.json');
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

// fakeManager is a Tampermonkey-shaped manager (GM_* spellings) whose
// GM_xmlhttpRequest asks serve(opts) for {status, headers, body}; status 0
// is a dropped connection. Every request is kept in .requests.
function fakeManager(serve) {
  const store = new Map();
  const requests = [];
  const g = {
    GM_getValue: (k, d) => (store.has(k) ? JSON.parse(store.get(k)) : d),
    GM_setValue: (k, v) => { store.set(k, JSON.stringify(v)); },
    GM_deleteValue: (k) => { store.delete(k); },
    GM_xmlhttpRequest: (opts) => {
      requests.push(opts);
      Promise.resolve(serve(opts)).then((r) => {
        if (!r || r.status === 0) return opts.onerror({});
        const headers = Object.entries(r.headers || {}).map(([k, v]) => `${k}: ${v}`).join('\r\n');
        opts.onload({ status: r.status, responseHeaders: headers, responseText: r.body === undefined ? '' : JSON.stringify(r.body) });
      });
    },
  };
  return { gm: mb.manager(g), store, requests };
}

module.exports = { mb, script, readCases, fakeManager };
