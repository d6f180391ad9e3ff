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
  function say(region, why) {
    var states = region.querySelectorAll("[data-poll-state]");
    for (var i = 0; i < states.length; i++) {
      var text = why ? SAID[why] || "paused" : "live";
      if (states[i].textContent !== text) states[i].textContent = text;
      states[i].setAttribute("data-paused", why ? "true" : "false");
    }
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
