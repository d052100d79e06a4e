// mangabookmark: the copy button beside a value shown once (a new token, a
// Reader's sign-in link, a feed address). Without JavaScript the value is
// still selectable. And on /settings, the browser's time zone in the zone
// field while the Reader has saved none (data-browser-zone).
(function () {
  "use strict";
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("button[data-copy]");
    if (!btn) {
      return;
    }
    var src = document.querySelector(btn.getAttribute("data-copy"));
    if (!src || !navigator.clipboard) {
      return;
    }
    navigator.clipboard.writeText(src.textContent.trim()).then(function () {
      btn.textContent = "Copied";
    });
  });
  // The import's progress: the upload's share while it is sent, then no
  // value (the bar moves on its own) while the server adds the entries.
  document.addEventListener("htmx:xhr:progress", function (ev) {
    var bar = ev.target.querySelector && ev.target.querySelector("progress.import-progress");
    if (!bar) {
      return;
    }
    bar.hidden = false;
    if (ev.detail.lengthComputable && ev.detail.loaded < ev.detail.total) {
      bar.value = Math.round((100 * ev.detail.loaded) / ev.detail.total);
    } else {
      bar.removeAttribute("value");
    }
  });
  var zone = document.querySelector("input[data-browser-zone]");
  if (zone && window.Intl) {
    var tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (tz) {
      zone.value = tz;
    }
  }
})();
