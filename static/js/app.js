// Page behaviour that HTML alone cannot give. Loaded as a file: the CSP allows no inline
// script, no eval and no inline handlers.
(function () {
  "use strict";

  function flash(message, kind) {
    var box = document.getElementById("flash");
    if (!box) return;
    var p = document.createElement("p");
    p.className = "notice notice-" + (kind || "error");
    p.textContent = message;
    box.replaceChildren(p);
  }

  // Confirmation for destructive buttons outside htmx (htmx has hx-confirm).
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-confirm]");
    if (button && !window.confirm(button.getAttribute("data-confirm"))) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  }, true);

  document.addEventListener("focusin", function (event) {
    if (event.target.matches("[data-select-on-focus]")) event.target.select();
  });

  // Escape inside an inline editor presses its Cancel control.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    var editor = event.target.closest("[data-escape-cancel]");
    if (!editor) return;
    var cancel = editor.querySelector("[data-cancel]");
    if (cancel) {
      event.preventDefault();
      cancel.click();
    }
  });

  // After a swap, put the keyboard where the new content asks (an inline editor's first
  // field, or a row that was just saved).
  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail.elt;
    if (!target || !target.querySelector) return;
    var focus = target.matches("[data-focus]") ? target : target.querySelector("[data-focus]");
    if (focus) focus.focus();
  });

  // Errors htmx does not swap (403, 404, 500, network): say so where people look.
  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    var message = "Something went wrong (" + xhr.status + "). Please reload the page.";
    if (xhr.status === 403) message = "You are not allowed to do that.";
    if (xhr.status === 404) message = "That no longer exists, or you no longer have access to it.";
    try {
      var body = JSON.parse(xhr.responseText);
      if (body && body.error && body.error.message) message = body.error.message;
    } catch (e) { /* an HTML body: keep the generic message */ }
    flash(message, "error");
  });
  document.addEventListener("htmx:sendError", function () {
    flash("The server could not be reached. Your change was not saved; please try again.", "error");
  });
})();

// --- Business case: keep the page's revision in step with its own writes -----------------
// A section saved in place moves the business case to a new revision; the server says so in
// HX-Trigger `charter:revised` {from, to}. The page's other forms (acts, other sections)
// carry the revision they were rendered with: move along only those still at `from`, so a
// write made by someone else in between still makes their next save stale.
(function () {
  "use strict";
  document.addEventListener("charter:revised", function (event) {
    var detail = event.detail || {};
    if (detail.from === undefined || detail.to === undefined) return;
    document.querySelectorAll("input[data-charter-revision]").forEach(function (input) {
      if (input.value === String(detail.from)) input.value = String(detail.to);
    });
  });
})();

// --- Business case: act forms and seat editors in <details> ------------------------------
// Opening one puts the keyboard on its first field; its Cancel control (and Escape, through
// data-escape-cancel above) closes it and returns focus to its summary.
(function () {
  "use strict";
  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (!details.matches || !details.matches("details[data-escape-cancel]") || !details.open) return;
    var field = details.querySelector("input:not([type=hidden]), select, textarea");
    if (field) field.focus();
  }, true);
  document.addEventListener("click", function (event) {
    var control = event.target.closest("[data-close-details]");
    if (!control) return;
    var details = control.closest("details");
    if (!details) return;
    details.open = false;
    var summary = details.querySelector("summary");
    if (summary) summary.focus();
  });
})();
