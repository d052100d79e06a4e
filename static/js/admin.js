// mangabookmark admin: the one behaviour htmx does not give us.
//
// htmx restores a page's history snapshot from the HTML it saved, and a
// form's checked and selected state lives in properties, not in that HTML:
// after Back or Forward the list would show one filter while the filter
// form showed another, and the next change would silently drop the filter.
// The address is the truth, so the form is set from it after a restore.
(function () {
  "use strict";
  function syncFilterForm() {
    var form = document.querySelector('[data-testid="filter-form"]');
    if (!form) {
      return;
    }
    var q = new URLSearchParams(location.search);
    Array.prototype.forEach.call(form.elements, function (el) {
      if (el.type === "radio") {
        el.checked = el.value === (q.get(el.name) || "");
      } else if (el.tagName === "SELECT") {
        el.value = q.get(el.name) || "";
      }
    });
  }
  document.addEventListener("htmx:historyRestore", syncFilterForm);
})();
