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

  // The top bar's menu button (shown on narrow screens only, by the stylesheet). Without
  // script the menu simply stays open.
  var menuToggle = document.querySelector(".menu-toggle");
  var siteMenu = document.getElementById("site-menu");
  if (menuToggle && siteMenu) {
    document.documentElement.classList.add("has-menu");
    menuToggle.hidden = false;
    var setMenu = function (open) {
      menuToggle.setAttribute("aria-expanded", open ? "true" : "false");
      siteMenu.classList.toggle("open", open);
    };
    menuToggle.addEventListener("click", function () {
      setMenu(menuToggle.getAttribute("aria-expanded") !== "true");
    });
    siteMenu.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && siteMenu.classList.contains("open")) {
        setMenu(false);
        menuToggle.focus();
      }
    });
  }

  // A table wider than the screen scrolls inside its own box (see the stylesheet): the
  // keyboard must reach it to scroll it, so a box that overflows becomes focusable.
  function focusableScrollers() {
    document.querySelectorAll("main table, .register-table, .table-scroll, .chart-box").forEach(function (box) {
      var overflows = box.scrollWidth > box.clientWidth;
      if (overflows && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
        box.setAttribute("data-scroll-focus", "");
      } else if (!overflows && box.hasAttribute("data-scroll-focus")) {
        box.removeAttribute("tabindex");
        box.removeAttribute("data-scroll-focus");
      }
    });
  }
  focusableScrollers();
  window.addEventListener("resize", focusableScrollers);
  document.addEventListener("htmx:afterSettle", focusableScrollers);

  document.addEventListener("click", function (event) {
    if (event.target.closest("[data-print]")) window.print();
  });

  // A date field is one Tab stop: Tab and Shift+Tab leave it (the browser would step
  // through its day, month and year first); the arrow keys still move between those parts.
  var FOCUSABLE = "a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), " +
    "select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex='-1'])";
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Tab" || event.altKey || event.ctrlKey || event.metaKey) return;
    var field = event.target;
    if (!field.matches || !field.matches("input[type=date], input[type=month]")) return;
    var all = Array.prototype.filter.call(document.querySelectorAll(FOCUSABLE), function (el) {
      return el === field || (el.getClientRects().length > 0 && el.tabIndex >= 0);
    });
    var next = all[all.indexOf(field) + (event.shiftKey ? -1 : 1)];
    if (!next) return;
    event.preventDefault();
    next.focus();
  });

  // Budget phasing grid: "Add a month" appends an empty row (the next month after the last
  // one filled) and puts the keyboard on it.
  document.addEventListener("click", function (event) {
    var add = event.target.closest("[data-add-phasing-row]");
    if (!add) return;
    var body = add.parentNode.querySelector("[data-phasing-rows]");
    var last = body && body.rows[body.rows.length - 1];
    if (!last) return;
    var row = last.cloneNode(true);
    var n = body.rows.length + 1;
    var month = row.querySelector("input[type=month]");
    var amount = row.querySelector("input[name='budgetPhasing-amount']");
    var previous = last.querySelector("input[type=month]").value;
    month.value = "";
    if (/^\d{4}-\d{2}$/.test(previous)) {
      var y = parseInt(previous.slice(0, 4), 10), m = parseInt(previous.slice(5), 10) + 1;
      if (m > 12) { m = 1; y += 1; }
      month.value = y + "-" + (m < 10 ? "0" : "") + m;
    }
    amount.value = "";
    month.setAttribute("aria-label", "Month " + n);
    amount.setAttribute("aria-label", "Amount " + n);
    body.appendChild(row);
    amount.focus();
  });

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
    // A saved row says "Saved" for a few seconds, then reads as any other row.
    var saved = target.matches("tr.saved") ? target : target.querySelector("tr.saved");
    if (saved) {
      window.setTimeout(function () {
        saved.classList.remove("saved");
        saved.removeAttribute("data-focus");
        var note = saved.querySelector(".saved-note");
        if (note) note.remove();
      }, 4000);
    }
  });

  // A notice swapped in out of band (a delete: what was deleted, and Undo) takes the
  // keyboard, since the row that had it is gone.
  document.addEventListener("htmx:oobAfterSwap", function () {
    var focus = document.querySelector("[data-focus-after-swap]");
    if (!focus) return;
    focus.removeAttribute("data-focus-after-swap");
    focus.focus();
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
  // The server refused a write without replacing the form (HX-Trigger `flash`).
  document.addEventListener("flash", function (event) {
    var detail = event.detail || {};
    if (detail.message) flash(detail.message, detail.kind);
  });
  // A write made in place moved a resource to a new revision (HX-Trigger `revised`, see
  // governance.http.announce_revision): the page's other forms for it move along, but only
  // those still at the old revision, so someone else's write in between still makes them stale.
  document.addEventListener("revised", function (event) {
    var detail = event.detail || {};
    if (!detail.resource || detail.from === undefined || detail.to === undefined) return;
    document.querySelectorAll("input[data-revision-of]").forEach(function (input) {
      if (input.getAttribute("data-revision-of") === detail.resource &&
          input.value === String(detail.from)) {
        input.value = String(detail.to);
      }
    });
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

// --- Registers ---------------------------------------------------------------------------------
// Row click opens the read-only detail; the add-row guard; cancelling an unsaved add row;
// focusing the first invalid field after a 422; drag-and-drop reordering of work packages
// (the keyboard uses the move buttons, which post without any script).
(function () {
  "use strict";

  var INTERACTIVE = "a, button, input, select, textarea, label, form, summary, details";

  document.addEventListener("click", function (event) {
    if (event.defaultPrevented || event.button !== 0) return;
    var row = event.target.closest("tr[data-href]");
    if (!row || event.target.closest(INTERACTIVE)) return;
    var selection = window.getSelection ? String(window.getSelection()) : "";
    if (selection.length) return; // selecting text is not a click on the row
    if (event.ctrlKey || event.metaKey) {
      window.open(row.getAttribute("data-href"), "_blank", "noopener");
    } else {
      window.location.assign(row.getAttribute("data-href"));
    }
  });

  // Cancel on an unsaved add row removes it instead of navigating away.
  document.addEventListener("click", function (event) {
    var cancel = event.target.closest("[data-remove-row]");
    if (!cancel) return;
    event.preventDefault();
    var row = cancel.closest("tr");
    var table = row && row.closest("table");
    if (row) row.remove();
    var add = table && document.querySelector("[data-add-row]");
    if (add) add.focus();
  });

  // One add row at a time: a second "Add" click returns to the open one.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var trigger = event.detail.elt;
    var selector = trigger && trigger.getAttribute && trigger.getAttribute("data-add-row");
    if (!selector) return;
    var open = document.querySelector(selector);
    if (open) {
      event.preventDefault();
      var field = open.querySelector("input:not([type=hidden]), select, textarea");
      if (field) field.focus();
    }
  });

  // After a refused save, put the keyboard on the first field the server marked invalid.
  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail.elt;
    if (!target || !target.querySelector) return;
    var invalid = target.querySelector("[aria-invalid=true]");
    if (invalid) invalid.focus();
  });

  // Drag and drop: only in a table marked reorderable (the register's own order, editors).
  var dragged = null;
  var startOrder = "";

  function rowsOf(tbody) {
    return Array.prototype.filter.call(tbody.rows, function (row) {
      return row.hasAttribute("data-id");
    });
  }

  function orderOf(tbody) {
    return rowsOf(tbody).map(function (row) { return row.getAttribute("data-id"); }).join(",");
  }

  document.addEventListener("mousedown", function (event) {
    var handle = event.target.closest(".reorderable .drag-handle");
    if (!handle) return;
    var row = handle.closest("tr[data-id]");
    if (row) row.setAttribute("draggable", "true");
  });

  document.addEventListener("dragstart", function (event) {
    var row = event.target.closest && event.target.closest(".reorderable tr[draggable=true]");
    if (!row) return;
    dragged = row;
    startOrder = orderOf(row.parentNode);
    row.classList.add("dragging");
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", row.getAttribute("data-id"));
  });

  document.addEventListener("dragover", function (event) {
    if (!dragged) return;
    var over = event.target.closest && event.target.closest("tr[data-id]");
    if (!over || over === dragged || over.parentNode !== dragged.parentNode) return;
    event.preventDefault();
    var box = over.getBoundingClientRect();
    var after = event.clientY > box.top + box.height / 2;
    over.parentNode.insertBefore(dragged, after ? over.nextSibling : over);
  });

  document.addEventListener("drop", function (event) {
    if (dragged) event.preventDefault();
  });

  document.addEventListener("dragend", function () {
    if (!dragged) return;
    var row = dragged;
    dragged = null;
    row.classList.remove("dragging");
    row.removeAttribute("draggable");
    var tbody = row.parentNode;
    var table = tbody && tbody.closest("table");
    if (!table || orderOf(tbody) === startOrder) return;
    var form = document.querySelector(table.getAttribute("data-reorder-form"));
    if (!form) return;
    Array.prototype.forEach.call(form.querySelectorAll("input[name=ids]"), function (input) {
      input.remove();
    });
    rowsOf(tbody).forEach(function (tr) {
      var input = document.createElement("input");
      input.type = "hidden";
      input.name = "ids";
      input.value = tr.getAttribute("data-id");
      form.appendChild(input);
    });
    form.requestSubmit();
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


// --- Registers: the bulk bar -------------------------------------------------------------
// Each row's tick belongs to the bar's form (form="…-bulk-form"). The bar shows while rows
// are ticked and says how many; "Tick every … on this page" ticks or clears the page's rows.
(function () {
  "use strict";
  function ticks(bar) {
    return Array.prototype.slice.call(
      document.querySelectorAll('input[name=row][form="' + bar.id + '"]')
    );
  }
  function refresh(bar) {
    var all = ticks(bar);
    var ticked = all.filter(function (box) { return box.checked; }).length;
    var refused = bar.querySelector(".bulk-refused");
    bar.hidden = ticked === 0 && !refused;
    var count = bar.querySelector("[data-bulk-count]");
    if (count) {
      var noun = count.getAttribute("data-noun") || "row";
      count.textContent = ticked + " " + noun + (ticked === 1 ? "" : "s") + " ticked: change them together";
    }
    var clear = bar.querySelector("[data-bulk-clear]");
    if (clear) clear.hidden = ticked === 0;
    var every = document.querySelector('[data-bulk-all="#' + bar.id + '"]');
    if (every) {
      every.checked = all.length > 0 && ticked === all.length;
      every.indeterminate = ticked > 0 && ticked < all.length;
    }
  }
  function refreshAll() {
    Array.prototype.forEach.call(document.querySelectorAll("[data-bulk-bar]"), refresh);
  }
  document.addEventListener("change", function (event) {
    var target = event.target;
    if (!target.matches) return;
    if (target.matches("[data-bulk-all]")) {
      var bar = document.querySelector(target.getAttribute("data-bulk-all"));
      if (!bar) return;
      ticks(bar).forEach(function (box) { box.checked = target.checked; });
      refresh(bar);
    } else if (target.matches("input[name=row][form]")) {
      var owner = document.getElementById(target.getAttribute("form"));
      if (owner && owner.hasAttribute("data-bulk-bar")) refresh(owner);
    }
  });
  document.addEventListener("click", function (event) {
    var clear = event.target.closest && event.target.closest("[data-bulk-clear]");
    if (!clear) return;
    var bar = clear.closest("[data-bulk-bar]");
    ticks(bar).forEach(function (box) { box.checked = false; });
    refresh(bar);
    var first = ticks(bar)[0];
    if (first) first.focus();
  });
  document.addEventListener("htmx:afterSettle", refreshAll);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", refreshAll);
  } else {
    refreshAll();
  }
})();
