// mangabookmark admin: the few behaviours htmx does not give us.
(function () {
  "use strict";

  // htmx restores a page's history snapshot from the HTML it saved, and a
  // form's checked and selected state lives in properties, not in that HTML:
  // after Back or Forward the list would show one filter while the filter
  // form showed another, and the next change would silently drop the filter.
  // The address is the truth, so the form is set from it after a restore.
  function syncFilterForm() {
    var form = document.querySelector('[data-testid="filter-form"]');
    if (!form) {
      return;
    }
    var q = new URLSearchParams(location.search);
    Array.prototype.forEach.call(form.elements, function (el) {
      if (el.type === "radio") {
        el.checked = el.value === (q.get(el.name) || "");
      } else if (el.tagName === "SELECT" || el.type === "search") {
        el.value = q.get(el.name) || "";
      }
    });
  }

  // A <time data-local> is written in UTC; show it in the owner's own zone.
  function localise(root) {
    Array.prototype.forEach.call(root.querySelectorAll("time[data-local]"), function (t) {
      var d = new Date(t.getAttribute("datetime"));
      if (!isNaN(d.getTime())) {
        t.textContent = d.toLocaleString(undefined, {
          day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", timeZoneName: "short"
        });
      }
    });
  }

  // After a swap the owner asked for, focus moves to what changed: the
  // element the server marked data-focus (a message, the confirm box, a Test
  // read's result), else the swapped region's caption. A live region asking
  // again on its own never takes focus from where the owner is.
  function focusChange(e) {
    var marked = document.querySelectorAll("[data-focus]");
    var own = !(e.detail.elt && e.detail.elt.hasAttribute && e.detail.elt.hasAttribute("data-live"));
    var first = marked.length ? marked[0] : null;
    Array.prototype.forEach.call(marked, function (el) { el.removeAttribute("data-focus"); });
    if (!own) {
      return;
    }
    if (first) {
      first.focus();
      return;
    }
    var region = e.detail.target && document.body.contains(e.detail.target) ? e.detail.target : null;
    var caption = region && region.querySelector('[data-testid="list-caption"]');
    if (caption && !document.body.contains(e.detail.elt)) {
      caption.focus();
    }
  }

  document.addEventListener("htmx:historyRestore", syncFilterForm);
  document.addEventListener("htmx:afterSettle", function (e) {
    localise(document);
    focusChange(e);
  });
  document.addEventListener("DOMContentLoaded", function () {
    localise(document);
    // A plain form's answer (no JavaScript swap) is a whole page: the
    // message it carries is what changed.
    var first = document.querySelector("[data-focus]");
    Array.prototype.forEach.call(document.querySelectorAll("[data-focus]"), function (el) { el.removeAttribute("data-focus"); });
    if (first) {
      first.focus();
    }
  });
})();
