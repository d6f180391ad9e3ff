// Everything the scripts say goes through the page's one live region (#announce), one way:
// emptied, then filled a moment later (text replaced at once in a region is often not heard).
function extresSay(text) {
  "use strict";
  var region = document.getElementById("announce");
  if (!region) return;
  region.textContent = "";
  if (text) {
    window.setTimeout(function () {
      region.textContent = text;
    }, 100);
  }
}

// Live regions (data-poll): a poll is skipped while the tab is hidden, while keyboard focus or
// a text selection is inside the region, or while a form in it holds values typed but not yet
// sent, so a refresh never takes any of them away; the region's [data-poll-state] then says
// "paused", and the next tick after that polls again. What a poll brings is morphed in
// (idiomorph): unchanged rows keep their elements, and with them focus, selection and scroll
// positions. A region that has not changed answers 204 and nothing is swapped.
(function () {
  "use strict";
  function edited(region) {
    var fields = region.querySelectorAll("input, textarea, select");
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f.type === "hidden" || f.type === "submit" || f.type === "button") continue;
      if (f.type === "checkbox" || f.type === "radio") {
        if (f.checked !== f.defaultChecked) return true;
      } else if (f.tagName === "SELECT") {
        for (var j = 0; j < f.options.length; j++) {
          if (f.options[j].selected !== f.options[j].defaultSelected) return true;
        }
      } else if (f.value !== f.defaultValue) {
        return true;
      }
    }
    return false;
  }
  function busy(region) {
    if (document.hidden) return "hidden";
    var active = document.activeElement;
    if (active && active !== document.body && region.contains(active)) return "focus";
    var sel = window.getSelection();
    if (sel && !sel.isCollapsed && sel.rangeCount > 0 && region.contains(sel.anchorNode)) return "selection";
    return edited(region) ? "edited" : "";
  }
  var SAID = {
    focus: "paused while you work here",
    selection: "paused while text is selected",
    edited: "paused: a form here has values not yet saved",
  };
  // the words beside the region change; a pause and a resume are said once in the page's live
  // region (the words are no live region: a poll that brings them anew would say them again)
  function say(region, why) {
    var states = region.querySelectorAll("[data-poll-state]");
    var text = why ? SAID[why] || "paused" : "live";
    var changed = false;
    for (var i = 0; i < states.length; i++) {
      if (states[i].textContent !== text) {
        states[i].textContent = text;
        changed = true;
      }
      states[i].setAttribute("data-paused", why ? "true" : "false");
    }
    if (changed) extresSay(why ? "Updates " + text + "." : "Updates live again.");
  }
  document.addEventListener("htmx:beforeRequest", function (event) {
    var region = event.detail.elt;
    if (!(region && region.hasAttribute && region.hasAttribute("data-poll"))) return;
    var why = busy(region);
    if (why) {
      event.preventDefault();
      region.setAttribute("data-poll-paused", why);
      if (why !== "hidden") say(region, why);
    } else {
      region.removeAttribute("data-poll-paused");
      say(region, "");
    }
  });
})();

// Where focus goes after a page arrives through a boosted link or form (htmx swaps the body, so
// the browser would leave focus on <body>): the first field a failed submit marks invalid, else
// what the page asks to be read first ([data-autofocus]: a confirmation's Cancel, What-if's
// answer), else the flash saying what happened, else the page's heading. Live polls are not
// navigations and move nothing.
(function () {
  "use strict";
  function land() {
    var main = document.getElementById("main");
    if (!main) return;
    var target =
      main.querySelector('[aria-invalid="true"]') ||
      main.querySelector("[data-autofocus]") ||
      main.querySelector(".flash") ||
      main.querySelector("h1");
    if (!target) return;
    if (!target.matches("a, button, input, select, textarea") && !target.hasAttribute("tabindex")) {
      target.setAttribute("tabindex", "-1");
    }
    target.focus({ preventScroll: false });
    // once htmx has done its own scrolling of the swap (to the top, for a boosted page): an
    // answer below the fold (What-if's) is brought into view, not only focused; a heading to the
    // top of the screen, so what it heads is read below it (it landed on the last line)
    var block = target.matches("h1, h2, h3") ? "start" : "nearest";
    window.setTimeout(function () {
      if (target.scrollIntoView) target.scrollIntoView({ block: block });
    }, 0);
  }
  // the flash said in the live region that was already there (a region inserted with its text
  // in it is often not announced): emptied, then filled a moment later
  function announce() {
    // what an action did (its flash), or what stopped it (a conflict with a colleague's change,
    // a notice that the node already advertises the name): said as saves are
    var flash = document.querySelector("#main [data-flash], #main .flash, #main [data-notice]");
    if (!flash) {
      extresSay("");
      return;
    }
    var text = flash.getAttribute("data-announce") || flash.textContent;
    // a refusal names what to fix: the first field's message with it (a conflict's "you saw
    // 4, it is now 6")
    var field = document.querySelector("#main .field-error:not(:empty)");
    if (flash.classList.contains("error") && field) text += " " + field.textContent;
    extresSay(text.trim());
  }
  document.addEventListener("htmx:afterSettle", function (event) {
    if (event.detail && event.detail.boosted) {
      announce();
      land();
    }
  });
  document.addEventListener("DOMContentLoaded", function () {
    // a page loaded as a whole (no JavaScript navigation, or a form's post/redirect/get): only
    // an answer, an error or what an action did (its flash) moves focus
    var main = document.getElementById("main");
    if (main && main.querySelector('[aria-invalid="true"], [data-autofocus], [data-flash], .flash')) {
      announce();
      land();
    }
  });
})();

// On a phone, filters beyond the first fold away ([data-fold-narrow]), so the first screen shows
// what the page is about (the nodes); they stay open where one of them is in use.
(function () {
  "use strict";
  function fold() {
    if (!window.matchMedia || !window.matchMedia("(max-width: 600px)").matches) return;
    document.querySelectorAll("details[data-fold-narrow][open]").forEach(function (box) {
      var used = Array.prototype.some.call(box.querySelectorAll("input, select"), function (field) {
        return field.type === "checkbox" ? field.checked : field.value !== "";
      });
      if (!used) box.removeAttribute("open");
    });
  }
  document.addEventListener("DOMContentLoaded", fold);
  document.addEventListener("htmx:afterSettle", function (event) {
    if (event.detail && event.detail.boosted) fold();
  });
})();

// States said once, when they change: a banner or a usage line carries [data-announce] (what to
// say when it comes) and maybe [data-announce-end] (what to say when it goes). After a live
// poll's swap the states now shown are compared with those before it, and only the difference is
// said in the page's one live region (#announce): an age that ticks inside them is never heard.
// A page that arrives (a load, a boosted navigation) says nothing of them: it is read as a page.
(function () {
  "use strict";
  var shown = null;
  function current() {
    var states = {};
    document.querySelectorAll("[data-announce]").forEach(function (e) {
      var said = e.getAttribute("data-announce");
      if (said) states[said] = e.getAttribute("data-announce-end") || "";
    });
    return states;
  }
  var timer = null;
  function compare() {
    timer = null;
    var now = current();
    var words = [];
    if (shown) {
      Object.keys(now).forEach(function (said) {
        if (!(said in shown)) words.push(said);
      });
      Object.keys(shown).forEach(function (said) {
        if (!(said in now) && shown[said] && words.indexOf(shown[said]) < 0) words.push(shown[said]);
      });
    }
    shown = now;
    if (words.length) extresSay(words.join(" "));
  }
  document.addEventListener("DOMContentLoaded", function () {
    shown = current();
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    if (event.detail && event.detail.boosted) {
      shown = current();
      return;
    }
    if (timer === null) timer = window.setTimeout(compare, 50); // a poll and its out-of-band parts
  });
  document.addEventListener("htmx:historyRestore", function () {
    shown = null; // Back or Forward: the page that comes is read as a page
    window.setTimeout(compare, 50);
  });
})();

// The Fleet page's clusters signed in separately (token mode): each section asks its own
// cluster's path for that cluster's figures, so the browser sends that cluster's session cookie
// with it and no other. An answer that would take the page elsewhere (that cluster's sign-in, a
// refusal) is not followed: the section keeps its link to sign in there.
document.addEventListener("htmx:beforeOnLoad", function (event) {
  "use strict";
  var elt = event.detail.elt;
  if (!(elt && elt.hasAttribute && elt.hasAttribute("data-apart"))) return;
  var xhr = event.detail.xhr;
  if (xhr.status !== 200 || xhr.getResponseHeader("HX-Redirect")) event.preventDefault();
});

// A filter's search box asks on typing (its form's "input delay" trigger): the change it fires
// when left would ask again and push a second history entry for the same filter. Stopped before
// it reaches the form (capture, at the document); the other fields still change the filter.
document.addEventListener(
  "change",
  function (event) {
    "use strict";
    var target = event.target;
    if (target && target.matches && target.matches('form.filters input[type="search"]')) {
      event.stopPropagation();
    }
  },
  true
);

// The Fleet page in token mode: the clusters signed in separately are not in the fleet's totals
// (the server never holds their tokens together), so the figures of every cluster whose figures
// are current on this page - this one's and those signed in to - are added up here, from the
// figures their own pages gave, into a second total (#signed-in-totals). Numbers only: each
// cell's text is a figure the server wrote.
(function () {
  "use strict";
  var ADDED = ["capacity", "allocatable", "requested", "free", "usable", "waiting"];
  function figure(row, field) {
    var cell = row.querySelector('[data-field="' + field + '"]');
    var n = cell ? parseInt(cell.textContent, 10) : NaN;
    return isNaN(n) ? 0 : n;
  }
  function rows() {
    var found = Array.prototype.slice.call(
      document.querySelectorAll("#fleet tr[data-cluster][data-resource]:not([data-left-out])")
    );
    document.querySelectorAll("section[data-apart]").forEach(function (section) {
      var state = section.querySelector("[data-apart-state]");
      var current = state && /^(live|stale)$/.test(state.getAttribute("data-apart-state"));
      if (current) found = found.concat(Array.prototype.slice.call(section.querySelectorAll("tr[data-cluster][data-resource]")));
    });
    return found;
  }
  function total() {
    var out = document.getElementById("signed-in-totals");
    if (!out) return;
    var by = {}, clusters = {};
    rows().forEach(function (row) {
      var resource = row.getAttribute("data-resource");
      var t = by[resource] || (by[resource] = { clusters: {}, largest: 0 });
      ADDED.forEach(function (f) {
        t[f] = (t[f] || 0) + figure(row, f);
      });
      t.largest = Math.max(t.largest, figure(row, "largest"));
      t.clusters[row.getAttribute("data-cluster")] = true;
      clusters[row.getAttribute("data-cluster")] = true;
    });
    var names = Object.keys(clusters).sort();
    var body = out.querySelector("tbody");
    body.textContent = "";
    Object.keys(by).sort().forEach(function (resource) {
      var t = by[resource], tr = document.createElement("tr");
      tr.setAttribute("data-signed-in-total", resource);
      var th = document.createElement("th");
      th.scope = "row";
      th.textContent = resource;
      tr.appendChild(th);
      var where = document.createElement("td");
      where.setAttribute("data-label", "Clusters");
      where.textContent = Object.keys(t.clusters).sort().join(", ");
      tr.appendChild(where);
      ADDED.slice(0, 5).concat(["largest", "waiting"]).forEach(function (f) {
        var td = document.createElement("td");
        td.className = "num";
        td.setAttribute("data-field", f);
        td.setAttribute("data-label", out.querySelector('thead [data-for="' + f + '"]').textContent);
        td.textContent = String(t[f]);
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    out.querySelector("[data-signed-in-clusters]").textContent = names.length ? names.join(", ") : "none yet";
    out.hidden = names.length === 0;
  }
  document.addEventListener("DOMContentLoaded", total);
  document.addEventListener("htmx:afterSettle", total);
})();
