// mangabookmark: the Web Push control on /settings. It fills the
// #push-subscribe container: a button that subscribes this browser (registers
// /sw.js, subscribes with the server's VAPID key, posts the subscription),
// and says the state: subscribed, blocked by the browser, not supported, or
// why subscribing failed.
(function () {
  "use strict";

  var SUBSCRIBE = "Get a notification in this browser when a chapter of your Bookmarks is out";
  var UNSUBSCRIBE = "Stop notifications in this browser";
  var SUBSCRIBE_WAIT = 15000; // ms

  function keyBytes(b64) {
    var s = (b64 + "===".slice((b64.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
    var raw = atob(s);
    var out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) {
      out[i] = raw.charCodeAt(i);
    }
    return out;
  }

  // post sends JSON to our own server. A redirect means the session ended
  // (the Reader gate sends to /login), so it is not followed.
  function post(path, body) {
    return fetch(path, {
      method: "POST",
      credentials: "same-origin",
      redirect: "manual",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(body),
    }).then(function (res) {
      if (res.type === "opaqueredirect") {
        throw new Error("your sign-in has ended; sign in again");
      }
      return res.json().catch(function () { return {}; }).then(function (j) {
        if (!res.ok && res.status !== 404) {
          throw new Error(j.message || "the server answered " + res.status);
        }
        return j;
      });
    });
  }

  function setup(box, key) {
    box.textContent = "";
    var state = document.createElement("p");
    state.setAttribute("data-testid", "push-state");
    state.setAttribute("role", "status");
    var btn = document.createElement("button");
    btn.type = "button";
    btn.className = "primary";
    btn.setAttribute("data-testid", "push-button");
    box.appendChild(state);
    box.appendChild(btn);

    function show(name, sentence, button) {
      state.setAttribute("data-state", name);
      // The page's message styles: a failure or a block wears the fault's.
      state.className = name === "failed" || name === "blocked" ? "message error" : "message";
      state.textContent = sentence;
      btn.hidden = !button;
      btn.disabled = false;
      if (button) {
        btn.textContent = button;
      }
    }

    if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
      show("unsupported", "This browser cannot receive Web Push notifications.", "");
      return;
    }
    if (!key) {
      show("unsupported", "Web Push is not set up on this server.", "");
      return;
    }
    if (Notification.permission === "denied") {
      show("blocked", "Notifications from this site are blocked in this browser's settings. Allow them there, then reload this page.", "");
      return;
    }

    var registration = navigator.serviceWorker.register("/sw.js", { scope: "/" }).then(function () {
      return navigator.serviceWorker.ready;
    });

    function idle() {
      show("off", "This browser gets no notifications.", SUBSCRIBE);
    }

    function subscribed() {
      show("subscribed", "This browser gets a notification when a chapter of your Bookmarks is out.", UNSUBSCRIBE);
    }

    function failed(err) {
      show("failed", "Could not subscribe this browser: " + ((err && err.message) || err) + ".", SUBSCRIBE);
    }

    registration.then(function (reg) {
      return reg.pushManager.getSubscription();
    }).then(function (sub) {
      if (sub) {
        // Posted again: the server may have dropped it (a gone endpoint).
        return post("/push/subscriptions", sub.toJSON()).then(subscribed, failed);
      }
      idle();
    }, failed);

    btn.addEventListener("click", function () {
      btn.disabled = true;
      if (state.getAttribute("data-state") === "subscribed") {
        registration.then(function (reg) {
          return reg.pushManager.getSubscription();
        }).then(function (sub) {
          if (!sub) {
            return idle();
          }
          return post("/push/subscriptions/delete", { endpoint: sub.endpoint }).then(function () {
            return sub.unsubscribe();
          }).then(idle);
        }).catch(function (err) {
          show("subscribed", "Could not stop notifications: " + ((err && err.message) || err) + ".", UNSUBSCRIBE);
        });
        return;
      }
      Notification.requestPermission().then(function (perm) {
        if (perm === "denied") {
          show("blocked", "Notifications from this site are blocked in this browser's settings. Allow them there, then reload this page.", "");
          throw null;
        }
        if (perm !== "granted") {
          throw new Error("notifications were not allowed");
        }
        return registration;
      }).then(function (reg) {
        // A browser whose push service cannot be reached may never answer:
        // say so rather than wait for ever.
        return Promise.race([
          reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) }),
          new Promise(function (_, reject) {
            setTimeout(function () { reject(new Error("this browser's push service did not answer")); }, SUBSCRIBE_WAIT);
          }),
        ]);
      }).then(function (sub) {
        return post("/push/subscriptions", sub.toJSON());
      }).then(subscribed, function (err) {
        if (err !== null) {
          failed(err);
        }
      });
    });
  }

  // start finds the container and the key: on the container or an element
  // in it (components.PushSubscribe), else from GET /push/key.
  function start() {
    var box = document.getElementById("push-subscribe");
    if (!box) {
      return;
    }
    var holder = box.hasAttribute("data-push-key") ? box : box.querySelector("[data-push-key]");
    if (holder) {
      setup(box, holder.getAttribute("data-push-key"));
      return;
    }
    fetch("/push/key", { credentials: "same-origin", headers: { Accept: "application/json" } }).then(function (res) {
      return res.ok ? res.json() : {};
    }).then(function (j) {
      setup(box, j.key || "");
    }, function () {
      setup(box, "");
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
