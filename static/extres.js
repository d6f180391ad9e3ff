// Live regions (data-poll): a poll is skipped while the tab is hidden, or while keyboard focus
// or a text selection is inside the region, so a refresh never takes either away; the next
// tick after that polls again. What a poll brings is morphed in (idiomorph): unchanged rows
// keep their elements, and with them focus, selection and scroll positions. A region that has
// not changed answers 204 and nothing is swapped.
(function () {
  "use strict";
  function busy(region) {
    if (document.hidden) return true;
    var active = document.activeElement;
    if (active && active !== document.body && region.contains(active)) return true;
    var sel = window.getSelection();
    return !!sel && !sel.isCollapsed && sel.rangeCount > 0 && region.contains(sel.anchorNode);
  }
  document.addEventListener("htmx:beforeRequest", function (event) {
    var region = event.detail.elt;
    if (region && region.hasAttribute && region.hasAttribute("data-poll") && busy(region)) {
      event.preventDefault();
      region.setAttribute("data-poll-paused", "true");
    }
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var region = event.detail.elt;
    if (region && region.removeAttribute) region.removeAttribute("data-poll-paused");
  });
})();
