// mangabookmark: the copy button beside a value shown once (a new token, a
// Reader's sign-in link). Without JavaScript the value is still selectable.
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
})();
