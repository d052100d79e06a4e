// mangabookmark's service worker, served at /sw.js so its scope is the whole
// site. It does one thing: show a Web Push (a new chapter of a Bookmark) and
// open the chapter when the notification is clicked. It caches nothing.
"use strict";

self.addEventListener("push", function (event) {
  var data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch (e) {
    data = {};
  }
  var title = typeof data.title === "string" && data.title ? data.title : "mangabookmark";
  var options = {
    body: typeof data.body === "string" ? data.body : "A new chapter is out.",
    // One notification per chapter address: a second push for it replaces
    // the first rather than stacking.
    tag: typeof data.url === "string" ? data.url : "",
    data: { url: data.url, bookmark: data.bookmark },
  };
  if (typeof data.icon === "string" && data.icon) {
    options.icon = data.icon;
  }
  event.waitUntil(self.registration.showNotification(title, options));
});

// notificationclick opens the chapter on the Site (else the Bookmark) in a
// new tab; only an http(s) address from our own push is ever opened.
self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  var d = event.notification.data || {};
  var target = d.url || d.bookmark || "/";
  if (!/^https?:\/\//.test(target) && target.charAt(0) !== "/") {
    target = "/";
  }
  event.waitUntil(self.clients.openWindow(target));
});
