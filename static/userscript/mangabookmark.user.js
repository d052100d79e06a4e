// ==UserScript==
// @name         MangaBookmark
// @namespace    https://github.com/mangabookmark/mangabookmark
// @version      1.0.9
// @description  Your group's Bookmarks, Progress and Latest Chapter on the Sites' own pages; Progress recorded as you read.
// @match        https://*.asurascans.com/*
// @match        https://*.asuracomic.net/*
// @match        https://*.asuratoon.com/*
// @match        https://*.asurascans.net/*
// @match        https://*.demonicscans.org/*
// @match        https://*.comix.to/*
// @match        https://*.comix.ws/*
// @match        https://*.kagane.to/*
// @match        https://*.kagane.org/*
// @match        https://*.novelfull.com/*
// @match        https://*.novelfull.net/*
// @match        https://*.lightnovelworld.org/*
// @match        https://*.lightnovelworld.com/*
// @match        https://*.lightnovelworld.co/*
// @match        __TOKENS_MATCH__
// @connect      __CONNECT_HOST__
// @grant        GM.xmlHttpRequest
// @grant        GM_xmlhttpRequest
// @grant        GM.getValue
// @grant        GM_getValue
// @grant        GM.setValue
// @grant        GM_setValue
// @grant        GM.deleteValue
// @grant        GM_deleteValue
// @grant        GM.registerMenuCommand
// @grant        GM_registerMenuCommand
// @run-at       document-idle
// @noframes
// @downloadURL  __BASE_URL__/userscript/mangabookmark.user.js
// @updateURL    __BASE_URL__/userscript/mangabookmark.meta.js
// ==/UserScript==

// The server fills the markers above and the BASE_URL constant below from its
// PUBLIC_BASE_URL when it serves this file; the source in the repository keeps
// the markers so the tests can load it as it is. Everything lives in one file
// with no build step: the factory below returns the pure parts for the tests
// and, inside a userscript manager, starts on the page.
(function (factory) {
  'use strict';
  const mb = factory();
  if (typeof module === 'object' && module.exports) {
    module.exports = mb;
  } else {
    mb.main();
  }
})(function () {
  'use strict';

  const VERSION = '1.0.9';
  const BASE_URL = '__BASE_URL__';

  // The queue holds at most this many Series; past it the oldest Sightings go
  // first, then the oldest Progress, and a message names what was dropped.
  const QUEUE_MAX = 500;
  // Full-jitter backoff: a retry waits a random time up to base·2^attempts,
  // capped, and never less than the server's Retry-After.
  const BACKOFF_BASE_MS = 2000;
  const BACKOFF_CAP_MS = 5 * 60 * 1000;
  // A chapter counts as read once this share of it has been scrolled past.
  const READ_SHARE = 0.9;
  // At most this many chapter numbers in one Sighting (the API's own limit).
  const SIGHTING_MAX = 50;
  // The read cache is refreshed when older than this.
  const CACHE_FRESH_MS = 5 * 60 * 1000;
  const REQUEST_TIMEOUT_MS = 15000;

  // GM storage keys. refused is the token the server last answered 401 to: the
  // queue waits until the token differs.
  const KEY = { token: 'token', refused: 'refusedToken', cache: 'cache', queue: 'queue', collapsed: 'collapsed', latest: 'latest', sighted: 'sighted' };

  // ---- chapter numbers (the adapters' rules: a canonical decimal string) ----

  const MAX_CHAPTER_DIGITS = 7;
  const MAX_CHAPTER_FRACTION = 4;
  const chapterWord = /(?:^|[^\p{L}\p{N}_])(?:chapter|chap|ch|episode|ep|c)\.?\s*[#:]?\s*(\d+(?:\.\d+)?)/iu;
  const bareNumber = /^\s*(\d+(?:\.\d+)?)\s*$/;

  // canonicalNumber turns "012.50" into "12.5"; null when it is not a plain
  // number within the bounds a chapter number has.
  function canonicalNumber(s) {
    s = String(s).trim().replace(/^\+/, '');
    const dot = s.indexOf('.');
    let int = dot < 0 ? s : s.slice(0, dot);
    let frac = dot < 0 ? '' : s.slice(dot + 1);
    if (int === '' && frac === '') return null;
    if (!/^\d*$/.test(int) || !/^\d*$/.test(frac)) return null;
    int = int.replace(/^0+/, '') || '0';
    frac = frac.replace(/0+$/, '');
    if (int.length > MAX_CHAPTER_DIGITS || frac.length > MAX_CHAPTER_FRACTION) return null;
    return frac === '' ? int : int + '.' + frac;
  }

  // parseChapterNumber reads "Chapter 110 - Title" as "110" and a bare "12.50"
  // as "12.5"; null when the label names no chapter.
  function parseChapterNumber(label) {
    const s = String(label || '').slice(0, 4096);
    let m = chapterWord.exec(s);
    if (m) return canonicalNumber(m[1]);
    m = bareNumber.exec(s);
    return m ? canonicalNumber(m[1]) : null;
  }

  // compareChapters orders two canonical numbers without float rounding.
  function compareChapters(a, b) {
    const ca = a == null ? null : canonicalNumber(a);
    const cb = b == null ? null : canonicalNumber(b);
    if (ca === null || cb === null) return (ca === null ? 0 : 1) - (cb === null ? 0 : 1);
    const [ai, af = ''] = ca.split('.');
    const [bi, bf = ''] = cb.split('.');
    if (ai.length !== bi.length) return Math.sign(ai.length - bi.length);
    if (ai !== bi) return ai < bi ? -1 : 1;
    const n = Math.max(af.length, bf.length);
    const pa = af.padEnd(n, '0');
    const pb = bf.padEnd(n, '0');
    return pa === pb ? 0 : pa < pb ? -1 : 1;
  }

  // ---- recognition (the adapters' Recognise and ChapterOf, rule for rule) ----

  const asuraSuffix = /-[0-9a-f]{8}$/;
  const asuraSlug = /^[a-z0-9][a-z0-9-]{0,199}$/;
  const demonicSegment = /^[A-Za-z0-9%._~!'()*,;:@+-]{1,300}$/;
  const comixHID = /^([a-z0-9]{4,12})(?:-([a-z0-9-]{0,200}))?$/;
  const comixChapterPath = /-chapter-(\d+(?:\.\d+)?)(?:$|[/?#])/;
  const kaganeUUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  const novelfullSlug = /^[a-z0-9][a-z0-9-]{0,200}$/;
  const novelfullChapterPath = /\/chapter-(\d+(?:\.\d+)?)(?:[-.]|$)/;
  const novelfullPages = new Set(['index', 'search', 'contact', 'privacy-policy', 'terms-of-service']);
  const lnwSlug = /^[a-z0-9][a-z0-9-]{0,200}$/;
  const lnwOldID = /-\d{3,}$/;
  const lnwOldChapter = /^(?:\d+-)?chapter-(\d+(?:\.\d+)?)(?:-|$)/;

  // Each Site: its current hosts, its legacy hosts, and how a path (its
  // non-empty segments) names a Series and a chapter number.
  const SITES = [
    {
      site: 'asurascans', hosts: ['asurascans.com'], legacy: ['asuracomic.net', 'asuratoon.com', 'asurascans.net'],
      read(seg) {
        let slug;
        if (seg[0] === 'comics' || seg[0] === 'series') {
          if (seg.length !== 2 && !(seg.length >= 4 && seg[2] === 'chapter')) return null;
          slug = seg[1].toLowerCase().replace(asuraSuffix, '');
        } else if (seg[0] === 'manga') {
          const m = seg.length === 2 && /^\d+-(.+)$/.exec(seg[1].toLowerCase());
          if (!m) return null;
          slug = m[1];
        } else {
          return null;
        }
        if (!asuraSlug.test(slug)) return null;
        return { seriesId: slug, chapter: seg.length >= 4 && seg[2] === 'chapter' ? canonicalNumber(seg[3]) : null };
      },
    },
    {
      site: 'demonicscans', hosts: ['demonicscans.org'], legacy: [],
      read(seg) {
        const chapterPage = seg.length >= 4 && seg.length <= 5 && seg[0] === 'title' && seg[2] === 'chapter';
        if (!(seg.length === 2 && seg[0] === 'manga') && !chapterPage) return null;
        if (!demonicSegment.test(seg[1])) return null;
        return { seriesId: seg[1], chapter: chapterPage ? canonicalNumber(seg[3]) : null };
      },
    },
    {
      site: 'comix', hosts: ['comix.to', 'comix.ws'], legacy: [],
      read(seg) {
        if (seg.length < 2 || seg.length > 3 || seg[0] !== 'title') return null;
        if (seg.length === 3 && !seg[2].includes('-chapter-')) return null;
        const m = comixHID.exec(seg[1].toLowerCase());
        if (!m) return null;
        const c = seg.length === 3 ? comixChapterPath.exec(seg[2]) : null;
        return { seriesId: m[1], chapter: c ? canonicalNumber(c[1]) : null };
      },
    },
    {
      site: 'kagane', hosts: ['kagane.to'], legacy: ['kagane.org'],
      read(seg) {
        const ok = (seg.length === 2 && seg[0] === 'series') || (seg.length === 4 && seg[0] === 'series' && seg[2] === 'reader');
        if (!ok) return null;
        const id = seg[1].toLowerCase();
        if (!kaganeUUID.test(id)) return null;
        // A reader page's address holds a book id: the number is on the page.
        return { seriesId: id, chapter: null, chapterPage: seg.length === 4 };
      },
    },
    {
      site: 'novelfull', hosts: ['novelfull.com', 'novelfull.net'], legacy: [],
      read(seg) {
        let slug;
        let chapter = null;
        if (seg.length === 1 && seg[0].endsWith('.html')) {
          slug = seg[0].slice(0, -'.html'.length);
        } else if (seg.length === 2 && seg[1].startsWith('chapter-') && seg[1].endsWith('.html')) {
          slug = seg[0];
          const m = novelfullChapterPath.exec('/' + seg[1]);
          chapter = m ? canonicalNumber(m[1]) : null;
        } else {
          return null;
        }
        slug = slug.toLowerCase();
        if (!novelfullSlug.test(slug) || novelfullPages.has(slug)) return null;
        return { seriesId: slug, chapter };
      },
    },
    {
      site: 'lightnovelworld', hosts: ['lightnovelworld.org'], legacy: ['lightnovelworld.com', 'lightnovelworld.co'],
      read(seg, current) {
        if (seg.length < 2 || seg.length > 4 || seg[0] !== 'novel') return null;
        let slug = seg[1].toLowerCase();
        if (!current) slug = slug.replace(lnwOldID, '');
        if (!lnwSlug.test(slug)) return null;
        let chapter = null;
        if (seg.length >= 4 && seg[2] === 'chapter') {
          chapter = canonicalNumber(seg[3]);
        } else if (seg.length === 3) {
          const m = lnwOldChapter.exec(seg[2].toLowerCase());
          chapter = m ? canonicalNumber(m[1]) : null;
        }
        return { seriesId: slug, chapter };
      },
    },
  ];

  function hostIn(host, domains) {
    host = host.toLowerCase().replace(/\.$/, '');
    return domains.some((d) => host === d || host.endsWith('.' + d));
  }

  // escapedPathSegments splits a path as Go's URL.EscapedPath does for the
  // addresses Sites use: percent-encoding is kept exactly as written.
  function escapedPathSegments(pathname) {
    return pathname.split('/').filter((s) => s !== '');
  }

  // recognise maps an address to {site, seriesId, chapter} (chapter a
  // canonical number or null), or null when it is no Series or chapter page
  // of a Site. Only https addresses without user-info are accepted, as on the
  // server.
  function recognise(address) {
    let u;
    try {
      u = new URL(String(address).trim());
    } catch (e) {
      return null;
    }
    if (u.protocol !== 'https:' || u.username !== '' || u.password !== '' || u.hostname === '') return null;
    for (const s of SITES) {
      const current = hostIn(u.hostname, s.hosts);
      if (!current && !hostIn(u.hostname, s.legacy)) continue;
      const got = s.read(escapedPathSegments(u.pathname), current);
      if (!got) return null;
      return { site: s.site, seriesId: got.seriesId, chapter: got.chapter, chapterPage: got.chapter !== null || !!got.chapterPage };
    }
    return null;
  }

  // ---- the write queue (pure functions over a list, persisted by the caller) ----

  function seriesKey(w) {
    return w.kind + ':' + w.site + '/' + w.seriesId;
  }

  function newIdempotencyKey() {
    const c = globalThis.crypto;
    if (c && typeof c.randomUUID === 'function') return c.randomUUID();
    const b = new Uint8Array(16);
    c.getRandomValues(b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  // mergeSightings keeps the highest SIGHTING_MAX distinct numbers, highest first.
  function mergeSightings(a, b) {
    const all = [...new Set([...(a || []), ...(b || [])].map(canonicalNumber).filter((x) => x !== null))];
    all.sort((x, y) => compareChapters(y, x));
    return all.slice(0, SIGHTING_MAX);
  }

  // enqueue adds one write, coalescing per Series: a Progress entry holds the
  // highest chapter asked for, a Sightings entry the highest numbers seen. An
  // entry keeps its place (its first enqueue time) and gets a new
  // Idempotency-Key only when its payload changes: the key names the payload.
  // Returns the new list and the entries evicted to stay within QUEUE_MAX.
  function enqueue(list, write, opts) {
    const now = opts.now;
    const newKey = opts.newKey || newIdempotencyKey;
    const max = opts.max || QUEUE_MAX;
    const key = seriesKey(write);
    const out = list.map((e) => ({ ...e }));
    const old = out.find((e) => e.key === key);
    if (old) {
      let changed = false;
      if (write.kind === 'progress') {
        if (compareChapters(write.chapter, old.chapter) > 0) {
          old.chapter = write.chapter;
          old.url = write.url;
          changed = true;
        }
        if (write.bookmark && !old.bookmark) {
          old.bookmark = true;
          changed = true;
        }
      } else {
        const merged = mergeSightings(old.chapters, write.chapters);
        if (merged.join() !== old.chapters.join()) {
          old.chapters = merged;
          changed = true;
        }
      }
      if (write.title) old.title = write.title;
      if (changed) {
        old.idempotencyKey = newKey();
        old.attempts = 0;
        old.nextAt = now;
      }
      return { list: out, evicted: [] };
    }
    const entry = {
      key, kind: write.kind, site: write.site, seriesId: write.seriesId, url: write.url,
      title: write.title || '', created: now, attempts: 0, nextAt: now, idempotencyKey: newKey(),
    };
    if (write.kind === 'progress') {
      entry.chapter = write.chapter;
      entry.bookmark = !!write.bookmark;
    } else {
      entry.chapters = mergeSightings([], write.chapters);
    }
    out.push(entry);
    const evicted = [];
    while (out.length > max) {
      // Sightings first (a Poll finds those chapters again), then the oldest
      // Progress.
      let i = oldestIndex(out, (e) => e.kind === 'sightings' && e !== entry);
      if (i < 0) i = oldestIndex(out, (e) => e !== entry);
      evicted.push(out.splice(i, 1)[0]);
    }
    return { list: out, evicted };
  }

  function oldestIndex(list, pred) {
    let best = -1;
    list.forEach((e, i) => {
      if (pred(e) && (best < 0 || e.created < list[best].created)) best = i;
    });
    return best;
  }

  // drainOrder lists the entries to send now, oldest first. ignoreBackoff is a
  // fresh start (a page load, the browser back online): everything is tried.
  function drainOrder(list, now, ignoreBackoff) {
    return list.filter((e) => ignoreBackoff || e.nextAt <= now).sort((a, b) => a.created - b.created);
  }

  // backoffDelay is full jitter: random in [0, min(cap, base·2^attempts)).
  function backoffDelay(attempts, random) {
    const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempts, 30));
    return Math.floor(random() * ceiling);
  }

  // retryAfterMs reads Retry-After as seconds or an HTTP date; null when absent
  // or unreadable.
  function retryAfterMs(value, now) {
    if (value == null || String(value).trim() === '') return null;
    const v = String(value).trim();
    if (/^\d+$/.test(v)) return Number(v) * 1000;
    const t = Date.parse(v);
    return Number.isNaN(t) ? null : Math.max(0, t - now);
  }

  // scheduleRetry records one failed attempt: the next try waits the jittered
  // backoff, and never less than what the server asked for.
  function scheduleRetry(entry, opts) {
    const attempts = entry.attempts + 1;
    let wait = backoffDelay(attempts, opts.random || Math.random);
    const asked = retryAfterMs(opts.retryAfter, opts.now);
    if (asked !== null) wait = Math.max(wait, asked);
    return { ...entry, attempts, nextAt: opts.now + wait, lastError: opts.error || '' };
  }

  // classify says what an answer means for a write: done, retry later (the
  // connection dropped, the server is unwell or asks us to slow down), token
  // (set a new one; the write waits for it) or refused (it will never succeed).
  function classify(status, word) {
    if (status >= 200 && status < 300) return 'done';
    // Progress of a Series the Reader does not follow: nothing to keep.
    if (status === 404 && word === 'not_bookmarked') return 'done';
    if (status === 0 || status === 408 || status === 425 || status === 429 || status >= 500) return 'retry';
    // The first try with this key has not answered yet, or an outage left its
    // key claimed: the server takes the key over after Retry-After.
    if (status === 409 && word === 'idempotency_key_in_flight') return 'retry';
    if (status === 401 || status === 403) return 'token';
    return 'refused';
  }

  // newerVersion is true when the server's latest version is above ours.
  function newerVersion(latest, mine) {
    const parse = (v) => String(v || '').trim().split('.').map((x) => parseInt(x, 10));
    const a = parse(latest);
    const b = parse(mine);
    if (a.length !== 3 || a.some(Number.isNaN) || b.length !== 3 || b.some(Number.isNaN)) return false;
    for (let i = 0; i < 3; i++) {
      if (a[i] !== b[i]) return a[i] > b[i];
    }
    return false;
  }

  // ---- reading a Site's page ----

  // sightingsOf lists the chapter numbers of the page's links to the same
  // Series (links to other Series — a sidebar, "more like this" — are not
  // ours), highest first, at most SIGHTING_MAX. A link's number comes from its
  // address, else from its text.
  function sightingsOf(doc, here) {
    const nums = [];
    for (const a of doc.querySelectorAll('a[href]')) {
      const r = recognise(a.href);
      if (!r || r.site !== here.site || r.seriesId !== here.seriesId || !r.chapterPage) continue;
      const n = r.chapter !== null ? r.chapter : parseChapterNumber(a.textContent);
      if (n !== null) nums.push(n);
    }
    return mergeSightings([], nums);
  }

  // chapterOfPage is the number of the chapter the page shows: from its
  // address, else (Kagane) from its title.
  function chapterOfPage(doc, here) {
    if (here.chapter !== null) return here.chapter;
    if (!here.chapterPage) return null;
    const og = doc.querySelector('meta[property="og:title"]');
    return parseChapterNumber((og && og.getAttribute('content')) || '') || parseChapterNumber(doc.title);
  }

  // readShare is how much of the page has been scrolled past, 0..1; 0 for a
  // page too short to scroll, where only following the next chapter counts.
  function readShare(win) {
    const el = win.document.documentElement;
    const total = Math.max(el.scrollHeight, win.document.body ? win.document.body.scrollHeight : 0);
    if (total <= win.innerHeight * 1.5) return 0;
    return Math.min(1, (win.scrollY + win.innerHeight) / total);
  }

  // isNextChapterLink: a link to a later chapter of the same Series.
  function isNextChapterLink(href, here, current) {
    const r = recognise(href);
    return !!r && r.site === here.site && r.seriesId === here.seriesId && r.chapter !== null &&
      current !== null && compareChapters(r.chapter, current) > 0;
  }

  // ---- the userscript manager (both spellings; Greasemonkey 4 has only GM.*) ----

  // managerGlobals collects the GM calls by their bare names: managers hand
  // them to the script's scope, not always to its global object.
  /* global GM, GM_getValue, GM_setValue, GM_deleteValue, GM_xmlhttpRequest, GM_registerMenuCommand */
  function managerGlobals() {
    return {
      GM: typeof GM === 'object' ? GM : undefined,
      GM_getValue: typeof GM_getValue === 'function' ? GM_getValue : undefined,
      GM_setValue: typeof GM_setValue === 'function' ? GM_setValue : undefined,
      GM_deleteValue: typeof GM_deleteValue === 'function' ? GM_deleteValue : undefined,
      GM_xmlhttpRequest: typeof GM_xmlhttpRequest === 'function' ? GM_xmlhttpRequest : undefined,
      GM_registerMenuCommand: typeof GM_registerMenuCommand === 'function' ? GM_registerMenuCommand : undefined,
    };
  }

  function manager(g) {
    const GMo = typeof g.GM === 'object' && g.GM ? g.GM : {};
    const pick = (dot, underscore) => (typeof GMo[dot] === 'function' ? GMo[dot].bind(GMo) : typeof g[underscore] === 'function' ? g[underscore] : null);
    const get = pick('getValue', 'GM_getValue');
    const set = pick('setValue', 'GM_setValue');
    const del = pick('deleteValue', 'GM_deleteValue');
    const xhr = pick('xmlHttpRequest', 'GM_xmlhttpRequest');
    const menu = pick('registerMenuCommand', 'GM_registerMenuCommand');
    return {
      // pageAddress: the Site address a page stands for, when the manager
      // says so (only the demo's reading room, a loopback page, does); a
      // real manager never does, and the page's own address is used.
      pageAddress: typeof GMo.pageAddress === 'function' ? () => String(GMo.pageAddress()) : null,
      get: async (k, d) => {
        const v = await get(k, undefined);
        return v === undefined ? d : v;
      },
      set: async (k, v) => set(k, v),
      del: async (k) => (del ? del(k) : set(k, undefined)),
      menu: (label, fn) => menu && menu(label, fn),
      request(opts) {
        return new Promise((resolve) => {
          const done = (r) => resolve({ status: (r && r.status) || 0, headers: parseHeaders((r && r.responseHeaders) || ''), text: (r && r.responseText) || '' });
          xhr({
            ...opts,
            // No cookies ride along: the API is a bearer-token API only.
            anonymous: true,
            timeout: REQUEST_TIMEOUT_MS,
            onload: done,
            onerror: () => done(null),
            ontimeout: () => done(null),
            onabort: () => done(null),
          });
        });
      },
    };
  }

  function parseHeaders(raw) {
    const h = {};
    for (const line of String(raw).split(/\r?\n/)) {
      const i = line.indexOf(':');
      if (i > 0) h[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    return h;
  }

  // ---- the API client ----

  function client(gm, base, now) {
    return {
      async call(method, path, body, extra) {
        const token = await gm.get(KEY.token, '');
        const headers = { 'X-Userscript-Version': VERSION, Accept: 'application/json' };
        if (token) headers.Authorization = 'Bearer ' + token;
        if (body !== undefined) headers['Content-Type'] = 'application/json';
        Object.assign(headers, extra || {});
        const r = await gm.request({ method, url: base + path, headers, data: body === undefined ? undefined : JSON.stringify(body) });
        let json = null;
        try {
          json = r.text ? JSON.parse(r.text) : null;
        } catch (e) {
          json = null;
        }
        if (r.headers['x-userscript-latest']) await gm.set(KEY.latest, r.headers['x-userscript-latest']);
        return { status: r.status, headers: r.headers, json, at: now() };
      },
    };
  }

  function writeRequest(e) {
    if (e.kind === 'progress') {
      // No chapter: the Bookmark alone (from the panel's Bookmark button).
      const body = e.chapter == null ? { url: e.url, bookmark: true } : { url: e.url, chapter: Number(e.chapter), bookmark: !!e.bookmark };
      return { path: '/api/v1/progress', body };
    }
    return { path: '/api/v1/sightings', body: { url: e.url, chapters: e.chapters.map(Number) } };
  }

  function describe(e) {
    return e.title ? `“${e.title}”` : `${e.site}/${e.seriesId}`;
  }

  function what(e) {
    if (e.kind !== 'progress') return 'chapters seen';
    return e.chapter == null ? 'Bookmark' : 'Progress ' + e.chapter;
  }

  // The messages: the only ways the queue speaks up (a 400, a 401, a full queue).
  const say = {
    token: (base) => `The server refused the userscript's token. Create a new one at ${base}/tokens and choose “Use this token in the userscript” (or set it from the userscript manager's menu); pending writes wait for it.`,
    noToken: (base) => `No token yet: create one at ${base}/tokens and choose “Use this token in the userscript”.`,
    refused: (e, msg) => `The server refused the ${what(e)} for ${describe(e)}${msg ? ': ' + msg : ''}. It was not kept; set it on the server's page if it is right.`,
    evicted: (e) => `The write queue was full (${QUEUE_MAX} Series): dropped the pending ${what(e)} of ${describe(e)}.`,
  };

  // sync owns the queue in GM storage: it sends writes, queues what cannot be
  // sent yet and drains the queue. GM storage has no transaction: two tabs
  // writing at the same moment can lose one queue write (docs/adr/0013).
  function sync(gm, api, opts) {
    const now = opts.now || Date.now;
    const random = opts.random || Math.random;
    const notify = opts.notify || (() => {});
    let draining = null;

    async function load() {
      const q = await gm.get(KEY.queue, []);
      return Array.isArray(q) ? q : [];
    }

    async function put(write) {
      const r = enqueue(await load(), write, { now: now() });
      await gm.set(KEY.queue, r.list);
      for (const e of r.evicted) notify('evicted', say.evicted(e));
      return r;
    }

    // send tries one entry; the answer says what happened to it.
    async function send(e) {
      const req = writeRequest(e);
      const r = await api.call('POST', req.path, req.body, { 'Idempotency-Key': e.idempotencyKey });
      return { verdict: classify(r.status, r.json && r.json.error), r };
    }

    // write is what the page calls. The write is kept in the queue first and
    // sent from there, so a page that unloads mid-request loses nothing; a
    // retry of it carries the same Idempotency-Key. Answers 'done' when it
    // reached the server, else 'queued'.
    async function write(w) {
      await put(w);
      if (!(await usableToken())) {
        notify('token', (await gm.get(KEY.token, '')) ? say.token(opts.base) : say.noToken(opts.base));
        return 'queued';
      }
      await drain(false);
      const key = seriesKey(w);
      return (await load()).some((e) => e.key === key) ? 'queued' : 'done';
    }

    // usableToken is the stored token unless the server has refused it.
    async function usableToken() {
      const token = await gm.get(KEY.token, '');
      return token && token !== (await gm.get(KEY.refused, '')) ? token : '';
    }

    async function tokenRefused(token) {
      await gm.set(KEY.refused, token);
      notify('token', say.token(opts.base));
    }

    async function retryLater(key, r) {
      const list = await load();
      const i = list.findIndex((e) => e.key === key);
      if (i < 0) return;
      list[i] = scheduleRetry(list[i], { now: now(), random, retryAfter: r.headers['retry-after'], error: String(r.status) });
      await gm.set(KEY.queue, list);
    }

    // drain sends the due entries oldest first and stops at the first that
    // must wait (the server is away, busy, or refuses the token).
    function drain(ignoreBackoff) {
      // One drain at a time; a drain asked for while one runs goes after it,
      // so a write queued meanwhile is not left for the timer.
      if (draining) return draining.then(() => drain(ignoreBackoff));
      draining = (async () => {
        try {
          const token = await usableToken();
          if (!token) return;
          for (const e of drainOrder(await load(), now(), ignoreBackoff)) {
            const { verdict, r } = await send(e);
            if (verdict === 'done' || verdict === 'refused') {
              await removeIfUnchanged(e);
              if (verdict === 'refused') notify('refused', say.refused(e, r.json && r.json.message));
              continue;
            }
            if (verdict === 'token') {
              await tokenRefused(token);
              return;
            }
            await retryLater(e.key, r);
            return;
          }
        } finally {
          draining = null;
        }
      })();
      return draining;
    }

    // removeIfUnchanged drops a sent entry unless a newer write replaced its
    // payload meanwhile (then the new payload, with its own key, stays).
    async function removeIfUnchanged(sent) {
      const list = await load();
      await gm.set(KEY.queue, list.filter((x) => !(x.key === sent.key && x.idempotencyKey === sent.idempotencyKey)));
    }

    async function nextDue() {
      const list = await load();
      return list.length ? Math.min(...list.map((e) => e.nextAt)) : null;
    }

    return { write, drain, load, nextDue };
  }

  // ---- the panel ----

  const PANEL_CSS = `
:host { all: initial; position: fixed; right: max(8px, env(safe-area-inset-right)); bottom: max(8px, env(safe-area-inset-bottom)); z-index: 2147483000; font: 13px/1.35 system-ui, -apple-system, "Segoe UI", sans-serif; }
.box { box-sizing: border-box; width: min(17rem, calc(100vw - 16px)); max-height: min(50vh, 22rem); overflow: auto; padding: 8px 10px; border-radius: 8px; background: var(--bg); color: var(--fg); border: 1px solid var(--line); box-shadow: 0 2px 10px rgba(0,0,0,.25); }
:host([data-theme="light"]) { --bg: #fbfaf7; --fg: #1d1b18; --muted: #5b564e; --line: #d8d2c6; --accent: #8a3b12; --ember: #c2410c; --danger: #a3321f; }
:host([data-theme="dark"]) { --bg: #1f1d1a; --fg: #f1ede6; --muted: #b9b2a6; --line: #3d3a34; --accent: #f0a36b; --ember: #fb923c; --danger: #cf5c4d; }
.head { display: flex; align-items: center; gap: 6px; }
.title { font-weight: 600; flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
button { font: inherit; color: inherit; background: transparent; border: 1px solid var(--line); border-radius: 6px; padding: 2px 8px; min-height: 28px; cursor: pointer; }
button.primary { border-color: var(--accent); color: var(--accent); }
.row { margin-top: 4px; display: flex; flex-wrap: wrap; gap: 4px 10px; align-items: baseline; }
.muted { color: var(--muted); }
.ember { color: var(--ember); font-weight: 700; }
.msg { margin-top: 6px; padding: 6px; border-left: 3px solid var(--danger); background: color-mix(in srgb, var(--danger) 10%, transparent); }
.msg button { margin-top: 4px; }
:host([data-reading]) { opacity: 0; pointer-events: none; transition: opacity .2s; }
.pill { display: inline-flex; align-items: center; gap: 6px; padding: 2px 10px; min-height: 28px; border-radius: 999px; background: var(--bg); color: var(--fg); border: 1px solid var(--line); box-shadow: 0 1px 6px rgba(0,0,0,.25); cursor: pointer; }
a { color: var(--accent); }
`;

  // pageTheme follows the Site's own look: dark when its background is dark.
  function pageTheme(win) {
    for (const el of [win.document.body, win.document.documentElement]) {
      if (!el) continue;
      const m = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?/.exec(win.getComputedStyle(el).backgroundColor || '');
      if (m && (m[4] === undefined || Number(m[4]) > 0.5)) {
        const lum = 0.2126 * m[1] + 0.7152 * m[2] + 0.0722 * m[3];
        return lum < 128 ? 'dark' : 'light';
      }
    }
    return win.matchMedia && win.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
  }

  function el(doc, tag, attrs, ...kids) {
    const e = doc.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'on') Object.entries(v).forEach(([ev, fn]) => e.addEventListener(ev, fn));
      else if (v !== false && v != null) e.setAttribute(k, v === true ? '' : v);
    }
    for (const k of kids) if (k != null && k !== false) e.append(k);
    return e;
  }

  function ago(ms) {
    const m = Math.round(ms / 60000);
    if (m < 1) return 'just now';
    if (m < 60) return `${m} min ago`;
    const h = Math.round(m / 60);
    return h < 48 ? `${h} h ago` : `${Math.round(h / 24)} days ago`;
  }

  // panelView is what the panel shows, built from plain values so the tests
  // can read it without a page.
  function panelView(s) {
    const v = { title: s.title || '', lines: [], ember: false, pending: s.pending > 0 ? `⟳ ${s.pending} pending` : '' };
    if (s.offline) v.offline = `offline${s.cacheAt ? ' · as of ' + ago(s.now - s.cacheAt) : ''}`;
    if (s.bookmarked === true) {
      v.bookmark = 'Bookmarked';
      v.lines.push(`Progress ${s.progress || '—'}`);
    } else if (s.bookmarked === false) {
      v.bookmark = 'Not bookmarked';
      v.canBookmark = true;
    }
    if (s.latest) v.lines.push(`Latest ${s.latest}`);
    v.ember = s.bookmarked === true && !!s.latest && compareChapters(s.latest, s.progress || '0') > 0;
    if (s.update) v.update = `Userscript ${s.update} is available`;
    return v;
  }

  function renderPanel(host, view, handlers) {
    const root = host.shadowRoot;
    const doc = host.ownerDocument;
    root.replaceChildren(el(doc, 'style', {}, PANEL_CSS));
    if (view.collapsed && !view.message) {
      root.append(el(doc, 'button', { class: 'pill', 'data-testid': 'mb-expand', title: 'MangaBookmark', on: { click: handlers.expand } },
        'MB', view.ember ? el(doc, 'span', { class: 'ember', 'data-testid': 'mb-ember', title: 'a chapter past your Progress' }, '●') : null,
        view.pending ? el(doc, 'span', { 'data-testid': 'mb-pending' }, view.pending) : null,
        view.offline ? el(doc, 'span', { class: 'muted', 'data-testid': 'mb-offline' }, 'offline') : null));
      return;
    }
    const box = el(doc, 'div', { class: 'box', role: 'region', 'aria-label': 'MangaBookmark' });
    box.append(el(doc, 'div', { class: 'head' },
      view.ember ? el(doc, 'span', { class: 'ember', 'data-testid': 'mb-ember', title: 'a chapter past your Progress' }, '●') : null,
      el(doc, 'span', { class: 'title' }, view.title || 'MangaBookmark'),
      el(doc, 'button', { 'data-testid': 'mb-collapse', 'aria-label': 'Collapse', on: { click: handlers.collapse } }, '–')));
    const facts = el(doc, 'div', { class: 'row' });
    if (view.bookmark) facts.append(el(doc, 'span', { 'data-testid': 'mb-bookmark' }, view.bookmark));
    for (const l of view.lines) facts.append(el(doc, 'span', { 'data-testid': 'mb-fact' }, l));
    box.append(facts);
    if (view.canBookmark) box.append(el(doc, 'div', { class: 'row' }, el(doc, 'button', { class: 'primary', 'data-testid': 'mb-bookmark-button', on: { click: handlers.bookmark } }, 'Bookmark')));
    const status = el(doc, 'div', { class: 'row muted' });
    if (view.pending) status.append(el(doc, 'span', { 'data-testid': 'mb-pending' }, view.pending));
    if (view.offline) status.append(el(doc, 'span', { 'data-testid': 'mb-offline' }, view.offline));
    if (view.update) status.append(el(doc, 'a', { href: BASE_URL + '/userscript/mangabookmark.user.js', 'data-testid': 'mb-update' }, view.update));
    if (status.childNodes.length) box.append(status);
    if (view.message) {
      box.append(el(doc, 'div', { class: 'msg', role: 'alert', 'data-testid': 'mb-message' }, view.message,
        el(doc, 'div', {}, el(doc, 'button', { 'data-testid': 'mb-dismiss', on: { click: handlers.dismiss } }, 'OK'))));
    }
    root.append(box);
  }

  // ---- on the page ----

  async function main() {
    const win = window;
    const gm = manager(managerGlobals());
    const base = BASE_URL.replace(/\/+$/, '');
    if (isTokensPage(win.location.href, base)) return tokensPage(win, gm);
    let page = null;
    const notifyUser = (kind, text) => page && page.say(text);
    const api = client(gm, base, Date.now);
    const s = sync(gm, api, { base, notify: notifyUser });
    page = pageController(win, gm, api, s);

    gm.menu('Set the server token…', async () => {
      const t = win.prompt('MangaBookmark: paste a token from ' + base + '/tokens');
      if (t && t.trim()) {
        await gm.set(KEY.token, t.trim());
        page.say('');
        await s.drain(true);
        page.refresh();
      }
    });
    gm.menu('Send pending writes now', () => s.drain(true).then(page.redraw));
    win.addEventListener('online', () => s.drain(true).then(page.redraw));
    scheduleDrains(s, win, page.redraw);
    await s.drain(true);
    await page.arm();
    watchAddress(win, page.arm);
  }

  // watchAddress re-arms the page when a single-page Site (Comix, Kagane)
  // moves to another chapter without loading a page: the script runs once
  // per load, so the address is what tells.
  function watchAddress(win, onChange) {
    const bare = () => win.location.href.split('#')[0];
    let last = bare();
    const check = () => {
      if (bare() === last) return;
      last = bare();
      onChange();
    };
    win.addEventListener('popstate', check);
    win.setInterval(check, 1000);
  }

  // addressOf is the address the script reads the page as.
  function addressOf(win, gm) {
    return gm.pageAddress ? gm.pageAddress() : win.location.href;
  }

  // pageController owns the panel and what the page does for the address it
  // is at; arm() starts over for a new address.
  function pageController(win, gm, api, s) {
    const fresh = () => ({ title: '', known: false, bookmarked: null, progress: null, latest: null, offline: false, cacheAt: 0, pending: 0, message: '', collapsed: false });
    let state = fresh();
    let here = null;
    let host = null;
    let armed = null; // aborts the listeners of the address before
    const c = {
      async redraw() {
        if (!host) return;
        state.pending = (await s.load()).length;
        const latest = await gm.get(KEY.latest, '');
        const view = panelView({ ...state, now: Date.now(), update: newerVersion(latest, VERSION) ? latest : '' });
        view.collapsed = state.collapsed;
        view.message = state.message;
        renderPanel(host, view, {
          // Remembered for Series pages only; chapter pages always open collapsed.
          collapse: async () => { state.collapsed = true; if (!here.chapterPage) await gm.set(KEY.collapsed, true); c.redraw(); },
          expand: async () => { state.collapsed = false; if (!here.chapterPage) await gm.set(KEY.collapsed, false); c.redraw(); },
          dismiss: () => c.say(''),
          bookmark: () => c.bookmark(),
        });
      },
      say(text) {
        state.message = text;
        c.redraw();
      },
      async refresh() {
        if (!here) return;
        await readState(win, here, gm, api, state);
        c.redraw();
      },
      async arm() {
        if (armed) armed.abort();
        armed = new AbortController();
        here = recognise(addressOf(win, gm));
        if (here) here.address = addressOf(win, gm);
        state = { ...fresh(), message: state.message };
        if (!here) {
          if (host) host.remove();
          host = null;
          return;
        }
        if (!host) {
          host = win.document.createElement('mangabookmark-panel');
          host.attachShadow({ mode: 'open' });
          host.setAttribute('data-theme', pageTheme(win));
          win.document.documentElement.append(host);
        }
        // A chapter page opens collapsed whatever was chosen elsewhere: the
        // page is for reading.
        state.collapsed = here.chapterPage || (await gm.get(KEY.collapsed, false)) === true;
        host.removeAttribute('data-reading');
        // The chapter is watched from the start: a next chapter's link
        // followed before the server has answered still records.
        const told = c.refresh();
        if (here.chapterPage) {
          watchReading(win, here, s, state, c.redraw, armed.signal);
          stepAside(win, host, state, c.redraw, armed.signal);
        }
        await told;
        if (state.known) reportSightings(win, here, s, gm);
      },
      // bookmark creates the Bookmark (and the Series, if the server does
      // not know it yet) and records no Progress: nothing has been read.
      async bookmark() {
        await s.write({ kind: 'progress', site: here.site, seriesId: here.seriesId, url: here.address, chapter: null, bookmark: true, title: state.title });
        state.bookmarked = true;
        await c.refresh();
        // The server knows the Series now: what this page lists can count.
        if (state.known) reportSightings(win, here, s, gm);
      },
    };
    return c;
  }

  function isTokensPage(href, base) {
    try {
      const u = new URL(href);
      const b = new URL(base);
      return u.origin === b.origin && (u.pathname === b.pathname.replace(/\/$/, '') + '/tokens' || u.pathname.startsWith(b.pathname.replace(/\/$/, '') + '/tokens/'));
    } catch (e) {
      return false;
    }
  }

  // tokensPage offers to store a token the page has just shown once.
  async function tokensPage(win, gm) {
    const doc = win.document;
    const offer = () => {
      const shown = doc.querySelector('[data-testid="new-token"]');
      if (!shown || shown.dataset.mbOffered) return;
      shown.dataset.mbOffered = '1';
      const btn = doc.createElement('button');
      btn.type = 'button';
      btn.textContent = 'Use this token in the userscript';
      btn.setAttribute('data-testid', 'use-token');
      btn.addEventListener('click', async () => {
        const token = (shown.value || shown.textContent || '').trim();
        if (!token) return;
        await gm.set(KEY.token, token);
        btn.textContent = 'The userscript now uses this token';
        btn.disabled = true;
      });
      shown.insertAdjacentElement('afterend', btn);
    };
    offer();
    // htmx may swap the new token in after load.
    new win.MutationObserver(offer).observe(doc.body, { childList: true, subtree: true });
  }

  // readState fills the panel from the server, else from the read cache.
  async function readState(win, here, gm, api, state) {
    const r = await api.call('GET', '/api/v1/lookup?url=' + encodeURIComponent(here.address)).catch(() => ({ status: 0 }));
    if (r.status === 200 && r.json) {
      const b = r.json.bookmark || null;
      const series = r.json.series || {};
      state.offline = false;
      // A Series nobody added takes no Sightings (the server answers
      // "known": false), so none is spent on it.
      state.known = !!r.json.series;
      // Before the server's first Poll of a new Series, a Series page's own
      // heading names it (shown as text, never as markup).
      state.title = series.title || state.title || (!here.chapterPage && headingOf(win.document)) || '';
      state.latest = series.latest_chapter || null;
      state.bookmarked = !!b;
      state.progress = b ? b.progress || null : null;
      await gm.set(KEY.cache, cacheWith(await gm.get(KEY.cache, null), here, b));
      refreshCache(gm, api).catch(() => {});
      return;
    }
    if (classify(r.status) === 'token') {
      await gm.set(KEY.refused, await gm.get(KEY.token, ''));
      state.message = say.token(BASE_URL.replace(/\/+$/, ''));
      // Nothing can be bookmarked with a refused token: no button.
      state.bookmarked = null;
    }
    const cache = await gm.get(KEY.cache, null);
    state.offline = classify(r.status) === 'retry';
    state.cacheAt = cache ? cache.at : 0;
    const hit = cache && (cache.bookmarks || []).find((b) => b.site === here.site && b.series_id === here.seriesId);
    if (hit) {
      state.known = true;
      state.title = hit.title || '';
      state.latest = hit.latest_chapter || null;
      state.progress = hit.progress || null;
      state.bookmarked = true;
    } else if (cache && classify(r.status) === 'retry') {
      state.bookmarked = false;
    }
  }

  // cacheWith is the cache with one Series' entry as the server just said
  // (b null: not bookmarked), so a page visited since the last full refresh
  // reads true offline. The ETag stays: the next refresh still revalidates.
  function cacheWith(cache, here, b) {
    if (!cache) return null;
    const rest = (cache.bookmarks || []).filter((x) => !(x.site === here.site && x.series_id === here.seriesId));
    return { ...cache, bookmarks: b ? [...rest, b] : rest };
  }

  function headingOf(doc) {
    const h = doc.querySelector('h1');
    return h ? h.textContent.replace(/\s+/g, ' ').trim().slice(0, 150) : '';
  }

  // refreshCache keeps every Bookmark in GM storage, revalidated by ETag.
  async function refreshCache(gm, api) {
    const cache = await gm.get(KEY.cache, null);
    if (cache && Date.now() - cache.at < CACHE_FRESH_MS) return;
    const r = await api.call('GET', '/api/v1/bookmarks', undefined, cache && cache.etag ? { 'If-None-Match': cache.etag } : {});
    if (r.status === 304 && cache) {
      await gm.set(KEY.cache, { ...cache, at: r.at });
    } else if (r.status === 200 && r.json) {
      const list = Array.isArray(r.json) ? r.json : r.json.bookmarks || [];
      await gm.set(KEY.cache, { at: r.at, etag: r.headers.etag || '', bookmarks: list });
    }
  }

  // watchReading records Progress once the chapter has been read: scrolled
  // past READ_SHARE of it, or a later chapter's link followed. Opening a
  // chapter records nothing. Until the server (or the cache) has said
  // whether the Series is bookmarked, the write goes anyway: Progress on a
  // Series without a Bookmark is dropped quietly (classify, not_bookmarked).
  function watchReading(win, here, s, state, redraw, signal) {
    let recorded = false;
    const record = async () => {
      if (recorded) return;
      const chapter = chapterOfPage(win.document, here);
      if (chapter === null || state.bookmarked === false) return;
      recorded = true;
      await s.write({ kind: 'progress', site: here.site, seriesId: here.seriesId, url: here.address, chapter, bookmark: false, title: state.title });
      if (state.bookmarked && compareChapters(chapter, state.progress || '0') > 0) state.progress = chapter;
      redraw();
    };
    win.addEventListener('scroll', () => {
      if (readShare(win) >= READ_SHARE) record();
    }, { passive: true, signal });
    win.document.addEventListener('click', (ev) => {
      const a = ev.target && ev.target.closest ? ev.target.closest('a[href]') : null;
      if (!a || !isNextChapterLink(a.href, here, chapterOfPage(win.document, here))) return;
      const sameTab = ev.button === 0 && !ev.ctrlKey && !ev.metaKey && !ev.shiftKey && !ev.altKey && (!a.target || a.target === '_self');
      if (!sameTab) {
        record();
        return;
      }
      // Leaving the page could cut the write short: the Progress is stored
      // (at most a moment's wait) before the next chapter opens.
      ev.preventDefault();
      ev.stopPropagation();
      const go = () => win.location.assign(a.href);
      Promise.race([record(), new Promise((r) => win.setTimeout(r, 3000))]).then(go, go);
    }, { capture: true, signal });
  }

  // stepAside keeps the panel off the reading area on a chapter page: while
  // the Reader scrolls down it collapses and fades out; scrolling up, or
  // reaching the chapter's end, brings it back. A message stays in view.
  function stepAside(win, host, state, redraw, signal) {
    let lastY = win.scrollY;
    win.addEventListener('scroll', () => {
      const down = win.scrollY > lastY + 4;
      const up = win.scrollY < lastY - 4;
      if (!down && !up) return;
      lastY = win.scrollY;
      const reading = down && !state.message && readShare(win) < READ_SHARE;
      if (reading && !state.collapsed) {
        state.collapsed = true;
        redraw();
      }
      if (reading) host.setAttribute('data-reading', '');
      else host.removeAttribute('data-reading');
    }, { passive: true, signal });
  }

  // reportSightings sends the page's chapter numbers once per new highest.
  // The highest is noted as sent only once the write is queued: noted first,
  // a page leaving in between would lose the Sighting to every later page.
  async function reportSightings(win, here, s, gm) {
    const nums = sightingsOf(win.document, here);
    if (nums.length === 0) return;
    const k = here.site + '/' + here.seriesId;
    const before = (await gm.get(KEY.sighted, {})) || {};
    if (before[k] && compareChapters(nums[0], before[k]) <= 0) return;
    await s.write({ kind: 'sightings', site: here.site, seriesId: here.seriesId, url: here.address, chapters: nums });
    const seen = (await gm.get(KEY.sighted, {})) || {};
    if (!seen[k] || compareChapters(nums[0], seen[k]) > 0) seen[k] = nums[0];
    await gm.set(KEY.sighted, seen);
  }

  // scheduleDrains retries due entries while the tab is open.
  function scheduleDrains(s, win, redraw) {
    const tick = async () => {
      const due = await s.nextDue();
      if (due === null) {
        win.setTimeout(tick, 30000);
        return;
      }
      const wait = Math.max(1000, due - Date.now());
      win.setTimeout(async () => {
        await s.drain(false);
        redraw();
        tick();
      }, Math.min(wait, 30000));
    };
    tick();
  }

  return {
    VERSION, QUEUE_MAX, BACKOFF_BASE_MS, BACKOFF_CAP_MS, READ_SHARE, SIGHTING_MAX,
    canonicalNumber, parseChapterNumber, compareChapters, recognise,
    enqueue, drainOrder, backoffDelay, retryAfterMs, scheduleRetry, classify, newerVersion, mergeSightings,
    sightingsOf, reportSightings, chapterOfPage, readShare, isNextChapterLink, isTokensPage, cacheWith,
    manager, addressOf, client, sync, panelView, parseHeaders, say, main,
  };
});
