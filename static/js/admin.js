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

  // After a swap, focus moves to what changed. The pages mark it with
  // autofocus (a message, a confirm box, a Test read's result), which htmx
  // focuses in what it swaps in; a page of the list has no such mark, so a
  // pager link that swapped itself away hands focus to the list's caption.
  function focusChange(e) {
    if (document.activeElement && document.activeElement !== document.body) {
      return; // focus is where the owner put it, or htmx already moved it
    }
    var settled = e.detail.elt;
    var mark = settled && settled.matches && (settled.matches("[autofocus]") ? settled : settled.querySelector("[autofocus]"));
    if (mark) {
      mark.focus();
      return;
    }
    var region = e.detail.target && document.body.contains(e.detail.target) ? e.detail.target : null;
    var caption = region && region.querySelector('[data-testid="list-caption"]');
    if (caption) {
      caption.focus();
    }
  }

  document.addEventListener("htmx:historyRestore", syncFilterForm);
  // A <time> is written by the server in the owner's zone (TIME_ZONE), the
  // same on every page and in the notices command: nothing to localise.
  document.addEventListener("htmx:afterSettle", focusChange);
})();
