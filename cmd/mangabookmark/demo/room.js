// The demo's reading room: a stand-in for a userscript manager, on this one
// loopback page only, so the real userscript runs in a plain browser. GM
// storage lives in this origin's localStorage (the page is the demo's, not a
// Site's); GM.xmlHttpRequest goes through the stand-in's proxy to the server
// (same origin, so the browser needs no CORS header the API never sends);
// GM.pageAddress tells the script which Site address this page stands for,
// since a loopback page cannot be at https://asurascans.com.
(function () {
  'use strict';
  const room = document.currentScript.dataset;
  const prefix = 'mangabookmark-demo:';
  const server = room.server.replace(/\/+$/, '');
  if (localStorage.getItem(prefix + 'token') === null) {
    localStorage.setItem(prefix + 'token', JSON.stringify(room.token));
  }
  const headerLines = (h) => Array.from(h.entries()).map(([k, v]) => k + ': ' + v).join('\r\n');
  window.GM = {
    info: { script: { name: 'MangaBookmark' }, scriptHandler: 'mangabookmark demo' },
    getValue: async (k, d) => {
      const v = localStorage.getItem(prefix + k);
      return v === null ? d : JSON.parse(v);
    },
    setValue: async (k, v) => {
      if (v === undefined) localStorage.removeItem(prefix + k);
      else localStorage.setItem(prefix + k, JSON.stringify(v));
    },
    deleteValue: async (k) => localStorage.removeItem(prefix + k),
    registerMenuCommand: () => 0,
    pageAddress: () => room.page,
    xmlHttpRequest: (o) => {
      const url = o.url.startsWith(server) ? room.proxy + o.url.slice(server.length) : o.url;
      const ctl = new AbortController();
      const timer = o.timeout ? setTimeout(() => ctl.abort(), o.timeout) : 0;
      fetch(url, { method: o.method || 'GET', headers: o.headers || {}, body: o.data, credentials: 'omit', signal: ctl.signal })
        .then(async (r) => {
          clearTimeout(timer);
          o.onload && o.onload({ status: r.status, responseText: await r.text(), responseHeaders: headerLines(r.headers) });
        })
        .catch(() => {
          clearTimeout(timer);
          o.onerror && o.onerror();
        });
    },
  };
})();
