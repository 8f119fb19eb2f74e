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

  // --- Filter forms (portfolio) ------------------------------------------------------------
  // A link marked data-filter-form="<form id>" (a heat-grid cell, a sortable column, Reset)
  // carries a complete filter query. Without JavaScript it is an ordinary link; with it, the
  // link sets the form's fields to its query and submits the form, so the form (which htmx
  // never replaces) always shows the filters of the rows below it.
  document.addEventListener("click", function (event) {
    var link = event.target.closest("a[data-filter-form]");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    var form = document.getElementById(link.getAttribute("data-filter-form"));
    if (!form || !window.htmx) return;
    event.preventDefault();
    var params = new URL(link.href, window.location.href).searchParams;
    Array.prototype.forEach.call(form.elements, function (field) {
      if (!field.name) return;
      if (field.type === "checkbox") {
        field.checked = params.getAll(field.name).indexOf(field.value) !== -1;
      } else if (field.tagName === "SELECT" || field.type === "hidden" || field.type === "search" || field.type === "text") {
        field.value = params.get(field.name) || "";
      }
    });
    form.requestSubmit();
  });
})();
